package proxy

import (
	"cmp"
	"net/http"
	"strings"
	"time"
)

// StatusReply is GET /api/status: what `heirloom doctor` asks the running sidecar.
type StatusReply struct {
	Version string      `json:"version"`
	Scope   string      `json:"scope"`  // the configured memory scope
	Listen  string      `json:"listen"` // the address it serves on
	Token   bool        `json:"token"`  // it requires a bearer token
	Store   StoreStatus `json:"store"`
	Index   IndexReply  `json:"index"`
	// Harnesses says when the sidecar last heard from each harness since it started: a hook, a
	// plugin's call or event, a streamed event. A harness never heard from is absent.
	Harnesses map[string]time.Time `json:"harnesses"`
	// Streams are the harness servers the sidecar follows (OpenCode servers, the OpenClaw
	// Gateway), by harness, with whether each is connected now.
	Streams []StreamStatus `json:"streams"`
}

// StoreStatus is the store's part of StatusReply.
type StoreStatus struct {
	Dir            string    `json:"dir"`
	Bytes          uint64    `json:"bytes"`
	Compactions    int64     `json:"compactions"` // since the sidecar started
	LastCompaction time.Time `json:"last_compaction,omitzero"`
	Writable       bool      `json:"writable"`
	Error          string    `json:"error,omitempty"` // why it is not writable
	// The data dir's filesystem at the store's last reading (0 when unknown), the free space
	// the store keeps in reserve, and whether writes are refused for want of it.
	FreeBytes  uint64 `json:"free_bytes"`
	TotalBytes uint64 `json:"total_bytes"`
	Reserve    int64  `json:"reserve_bytes"`
	DiskFull   bool   `json:"disk_full"`
}

// StreamStatus is one followed harness server.
type StreamStatus struct {
	Harness   string `json:"harness"`
	Target    string `json:"target"`
	Connected bool   `json:"connected"`
}

// getStatus serves GET /api/status.
func (s *Server) getStatus(r *http.Request) (any, error) {
	if _, err := parseParams(r); err != nil {
		return nil, err
	}
	ctx := r.Context()
	h, err := s.store().Health(ctx)
	if err != nil {
		return nil, err
	}
	reply := StatusReply{
		Version: cmp.Or(s.Version, "dev"), Scope: s.scope(), Listen: strings.TrimPrefix(s.URL(), "http://"), Token: s.Token != "",
		Store: StoreStatus{Dir: h.Dir, Bytes: h.DiskBytes, Compactions: h.Compactions, LastCompaction: h.LastCompact, Writable: true,
			FreeBytes: h.FreeBytes, TotalBytes: h.TotalBytes, Reserve: h.Reserve, DiskFull: h.DiskFull},
		Index:     indexReply(s.store().IndexStatus()),
		Harnesses: s.Engine.LastHeard(),
		Streams:   []StreamStatus{},
	}
	if err := s.store().Check(ctx); err != nil {
		reply.Store.Writable, reply.Store.Error = false, err.Error()
	}
	for _, st := range s.Streams {
		reply.Streams = append(reply.Streams, StreamStatus{Harness: st.Harness, Target: st.Target, Connected: st.Stream.StreamStats().Connected})
	}
	return reply, nil
}
