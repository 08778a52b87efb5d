// Package ui holds the lineage viewer the sidecar serves at /ui: one HTML page, its script and
// its style sheet, embedded in the binary (no CDN: it works offline). The page reads the same
// API as the command-line tools (/api/sessions, lineage, blocks, runs, transcript, search) and
// follows /api/events for live updates.
package ui

import (
	"embed"
	"io/fs"
)

//go:embed assets
var assets embed.FS

// Assets are the viewer's files: index.html, app.js, app.css.
func Assets() fs.FS {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded tree always has assets/
	}
	return sub
}
