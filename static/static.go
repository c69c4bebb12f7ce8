// Package static owns the files the web server serves under /static/: the
// stylesheet now, and later the vendored chart and htmx scripts with the
// one script that initialises the charts. Everything is embedded in the
// binary, so the server needs no files on disk and no CDN.
package static

import "embed"

// FS holds the embedded assets. A file at css/app.css is served at
// /static/css/app.css.
//
//go:embed css
var FS embed.FS
