package server

import (
	"embed"
	"net/http"
	"path"
)

// The page's files, built into the binary: nothing is fetched at run time, from the
// gate's machine or elsewhere, and the script and the style are files of their own
// (the content security policy allows no inline script or style).
//
//go:embed webui/index.html webui/app.js webui/app.css
var webUI embed.FS

// webContentTypes are the types of the page's files, by extension.
var webContentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
}

// serveAsset serves the page's file name (go:embed fails the build without it; a
// name of no known type is a bug that panics as ServeWeb starts).
func serveAsset(name string) http.HandlerFunc {
	b, err := webUI.ReadFile("webui/" + name)
	ctype := webContentTypes[path.Ext(name)]
	if err != nil || ctype == "" {
		panic("soundgate/server: the page's file " + name + " is not embedded with a known type")
	}
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", ctype)
		w.Write(b)
	}
}
