package proxy

import (
	"net/http"
	"time"

	"github.com/heirloom-dev/heirloom/kv"
)

// APIBlock is one delivery of context to a session: when, through what, which blocks and how
// long, from which parent and how that pairing stood (an inherited block), what was cut to fit,
// and the text as the harness got it.
type APIBlock struct {
	Time        time.Time `json:"time"`
	Via         string    `json:"via"`
	Harness     string    `json:"harness,omitempty"`
	Blocks      []string  `json:"blocks"`
	Chars       int       `json:"chars"`
	Parent      string    `json:"parent,omitempty"`
	ParentScope string    `json:"parent_scope,omitempty"`
	Pairing     string    `json:"pairing,omitempty"` // "confirmed" or "provisional", for an inherited block
	Cut         string    `json:"cut,omitempty"`
	Text        string    `json:"text,omitempty"`
}

// BlocksReply is GET /api/sessions/{key}/blocks.
type BlocksReply struct {
	Session APISession `json:"session"`
	Blocks  []APIBlock `json:"blocks"`
}

// getBlocks serves GET /api/sessions/{key}/blocks: the blocks of context heirloom delivered to
// the session, newest first (the newest kv.MaxBlocks are kept), each with its text unless
// text=false.
func (s *Server) getBlocks(r *http.Request) (any, error) {
	key, err := pathKey(r)
	if err != nil {
		return nil, err
	}
	p, err := parseParams(r, "scope", "limit", "text")
	if err != nil {
		return nil, err
	}
	limit, err := p.limit(kv.MaxBlocks)
	if err != nil {
		return nil, err
	}
	withText := p["text"] != "false"
	if _, err := p.oneOf("text", "true", "false"); err != nil {
		return nil, err
	}
	ctx, scope := r.Context(), p.scope(s.scope())
	sess, err := s.store().GetSession(ctx, scope, key)
	if err != nil {
		return nil, notFound(err, "session "+key)
	}
	list, err := s.store().Blocks(ctx, scope, key, limit)
	if err != nil {
		return nil, err
	}
	reply := BlocksReply{Session: apiSession(sess), Blocks: make([]APIBlock, 0, len(list))}
	for _, b := range list {
		a := APIBlock{Time: b.At, Via: b.Via, Harness: b.Harness, Blocks: b.Headings, Chars: b.Chars,
			Parent: b.ParentID, ParentScope: b.ParentScope, Cut: b.Cut}
		if a.Blocks == nil {
			a.Blocks = []string{}
		}
		if b.ParentID != "" {
			a.Pairing = "confirmed"
			if b.Provisional {
				a.Pairing = "provisional"
			}
		}
		if withText {
			a.Text = b.Text
		}
		reply.Blocks = append(reply.Blocks, a)
	}
	return reply, nil
}
