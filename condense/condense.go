// Package condense makes level-2 condensations of sub-agent results: it asks an
// OpenAI-compatible chat-completions endpoint (OpenAI, a local Ollama, llama.cpp or vLLM server,
// anything that speaks POST /chat/completions) to summarise a long result into labelled
// sections, and renders them as text. It is heirloom's one outbound call to a model; nothing
// here decides when to call it (the engine does, in the background, never while a harness
// waits) and nothing is stored here.
//
// Every failure (no answer within the timeout, a non-2xx status, a redirect, which is never
// followed, a reply that is not the JSON asked for, an empty summary) is an error: the caller
// falls back to level 3 (head and tail). What is sent is sent as given: the caller redacts it.
package condense

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// DefaultTimeout bounds one summary when Client.Timeout is zero.
const DefaultTimeout = 30 * time.Second

// Bounds on what one call sends and reads.
const (
	// MaxInputBytes is the most of a result sent: a longer one is sent as its first two thirds
	// and its last third of this, around a line saying what was left out.
	MaxInputBytes = 96 << 10
	// maxReplyBytes is the most of the endpoint's reply read.
	maxReplyBytes = 1 << 20
	// maxItems and maxItemBytes bound each section of a summary as rendered.
	maxItems     = 12
	maxItemBytes = 600
	maxSummary   = 2000
)

// Client asks an OpenAI-compatible endpoint for summaries. Set URL and Model; the zero values of
// the rest are usable. It is safe for concurrent use.
type Client struct {
	// URL is the API's base URL, e.g. "http://127.0.0.1:11434/v1" (POST URL/chat/completions),
	// or the full URL of the chat-completions endpoint (ending in /chat/completions). Required.
	URL string
	// Model is the model to ask. Required.
	Model string
	// Token, when set, is sent as "Authorization: Bearer <token>".
	Token string
	// Timeout bounds one summary, connection to last byte; zero means DefaultTimeout.
	Timeout time.Duration
	// HTTP makes the requests; nil means a client of its own that follows no redirect (a 3xx
	// reply is an error: a 307 must not resend the result to another address) and has no
	// timeout of its own (Timeout bounds each call).
	HTTP *http.Client
}

// Summary is what the model is asked for: a result in labelled sections. Empty sections are
// left out of Text.
type Summary struct {
	Summary     string   `json:"summary"`      // what the sub-agent found or did, in a few sentences
	Conclusions []string `json:"conclusions"`  // what it concluded
	FilePaths   []string `json:"file_paths"`   // files it names as read, changed or relevant
	ActionItems []string `json:"action_items"` // what is left to do
	Errors      []string `json:"errors"`       // errors or failures it reports
	KeyData     []string `json:"key_data"`     // figures, identifiers, versions, commands worth keeping
}

// instructions is the system prompt of every call.
const instructions = `You condense the result a sub-agent returned to the agent that delegated the task, so that agent can use it without reading it all. Reply with one JSON object and nothing else, with these keys:
"summary": what the sub-agent found or did, in at most 4 sentences;
"conclusions": its conclusions, as short strings;
"file_paths": file paths it names as read, changed or relevant;
"action_items": what is left to do, as it says;
"errors": errors or failures it reports;
"key_data": figures, identifiers, versions, commands and other exact values worth keeping.
Use empty lists for what the result does not contain. Copy paths and values exactly. Do not add anything the result does not say.`

// Condense asks for a summary of result, the answer to task, and returns it rendered (see
// Summary.Text). It implements the engine's Condenser.
func (c *Client) Condense(ctx context.Context, task, result string) (string, error) {
	s, err := c.Summarize(ctx, task, result)
	if err != nil {
		return "", err
	}
	return s.Text(), nil
}

// Summarize asks for a summary of result, the answer to task. It returns an error when the
// endpoint does not answer within the timeout, answers with a status other than 2xx, or with
// anything but a JSON object holding a non-empty summary.
func (c *Client) Summarize(ctx context.Context, task, result string) (Summary, error) {
	if c.URL == "" || c.Model == "" {
		return Summary{}, errors.New("condense: url and model required")
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	body, err := json.Marshal(request{
		Model: c.Model,
		Messages: []message{
			{Role: "system", Content: instructions},
			{Role: "user", Content: "Task given to the sub-agent:\n" + clip(task, 4<<10) + "\n\nResult it returned:\n" + clip(result, MaxInputBytes)},
		},
		Temperature:    0,
		ResponseFormat: &responseFormat{Type: "json_object"},
	})
	if err != nil {
		return Summary{}, fmt.Errorf("condense: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint(), bytes.NewReader(body))
	if err != nil {
		return Summary{}, fmt.Errorf("condense: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		// No redirect is followed: the result goes to the configured endpoint or nowhere.
		hc = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return Summary{}, fmt.Errorf("condense: ask %s: %w", c.endpoint(), err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxReplyBytes))
	if err != nil {
		return Summary{}, fmt.Errorf("condense: read the reply of %s: %w", c.endpoint(), err)
	}
	if resp.StatusCode/100 != 2 {
		return Summary{}, fmt.Errorf("condense: %s answered %s: %s", c.endpoint(), resp.Status, clip(strings.TrimSpace(string(raw)), 200))
	}
	var reply completion
	if err := json.Unmarshal(raw, &reply); err != nil {
		return Summary{}, fmt.Errorf("condense: %s: not a chat completion: %w", c.endpoint(), err)
	}
	if len(reply.Choices) == 0 {
		return Summary{}, fmt.Errorf("condense: %s: no choices in the reply", c.endpoint())
	}
	s, err := parseSummary(reply.Choices[0].Message.Content)
	if err != nil {
		return Summary{}, fmt.Errorf("condense: %s: %w", c.endpoint(), err)
	}
	return s, nil
}

// endpoint is the chat-completions URL.
func (c *Client) endpoint() string {
	u := strings.TrimRight(c.URL, "/")
	if strings.HasSuffix(u, "/chat/completions") {
		return u
	}
	return u + "/chat/completions"
}

// parseSummary reads the model's answer: a JSON object, possibly in a Markdown code fence or
// with text around it.
func parseSummary(content string) (Summary, error) {
	text := strings.TrimSpace(content)
	if i, j := strings.IndexByte(text, '{'), strings.LastIndexByte(text, '}'); i >= 0 && j > i {
		text = text[i : j+1]
	}
	var s Summary
	if err := json.Unmarshal([]byte(text), &s); err != nil {
		return Summary{}, fmt.Errorf("the answer is not the JSON object asked for: %w", err)
	}
	if strings.TrimSpace(s.Summary) == "" {
		return Summary{}, errors.New("the answer has no summary")
	}
	return s, nil
}

// Text renders s in labelled sections, those with nothing left out:
//
//	Summary: <summary>
//	Conclusions:
//	- <conclusion>
//	File paths:
//	- <path>
//	Action items:
//	- <item>
//	Errors:
//	- <error>
//	Key data:
//	- <value>
//
// The summary is cut to 2,000 bytes, each section to 12 items of 600 bytes, each put on one line.
func (s Summary) Text() string {
	var b strings.Builder
	b.WriteString("Summary: " + oneLine(s.Summary, maxSummary))
	for _, sec := range []struct {
		title string
		items []string
	}{
		{"Conclusions", s.Conclusions}, {"File paths", s.FilePaths}, {"Action items", s.ActionItems},
		{"Errors", s.Errors}, {"Key data", s.KeyData},
	} {
		var lines []string
		for _, it := range sec.items {
			if len(lines) == maxItems {
				break
			}
			if it = oneLine(it, maxItemBytes); it != "" {
				lines = append(lines, "- "+it)
			}
		}
		if len(lines) > 0 {
			b.WriteString("\n" + sec.title + ":\n" + strings.Join(lines, "\n"))
		}
	}
	return b.String()
}

// oneLine puts s on one line and cuts it to max bytes at a rune boundary.
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "\uFFFD")), " ")
	if len(s) <= max {
		return s
	}
	for max > 0 && !utf8.RuneStart(s[max]) {
		max--
	}
	return s[:max] + "…"
}

// clip returns s, or, over max bytes, its first two thirds and last third of max around a line
// saying how many bytes were left out.
func clip(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= max {
		return s
	}
	h, t := max*2/3, max/3
	for h > 0 && !utf8.RuneStart(s[h]) {
		h--
	}
	from := len(s) - t
	for from < len(s) && !utf8.RuneStart(s[from]) {
		from++
	}
	return s[:h] + fmt.Sprintf("\n\n[… %d bytes left out …]\n\n", from-h) + s[from:]
}

// The wire format of a chat completion: what is sent, and the little read back.
type (
	request struct {
		Model          string          `json:"model"`
		Messages       []message       `json:"messages"`
		Temperature    float64         `json:"temperature"`
		ResponseFormat *responseFormat `json:"response_format,omitempty"`
	}
	message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	responseFormat struct {
		Type string `json:"type"`
	}
	completion struct {
		Choices []struct {
			Message message `json:"message"`
		} `json:"choices"`
	}
)
