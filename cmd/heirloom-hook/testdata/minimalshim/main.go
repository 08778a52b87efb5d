// Command minimalshim is the least a command hook written in Go can do, the baseline of
// BenchmarkHook: read stdin, POST it to the sidecar's /hooks/claude-code with a 1.5 s timeout,
// and print the reply, or {} when there is none. It imports only the standard library.
package main

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"time"
)

func main() {
	body, _ := io.ReadAll(os.Stdin)
	url := os.Getenv("HEIRLOOM_URL")
	if url == "" {
		url = "http://127.0.0.1:7433"
	}
	client := &http.Client{Timeout: 1500 * time.Millisecond}
	reply := []byte("{}")
	resp, err := client.Post(url+"/hooks/claude-code", "application/json", bytes.NewReader(body))
	if err == nil {
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil && resp.StatusCode == http.StatusOK {
			reply = b
		}
	}
	os.Stdout.Write(append(reply, '\n'))
}
