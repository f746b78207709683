package console

import (
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"time"
)

// assets are the console's templates and static files, all of it: it
// fetches nothing from elsewhere, so it works offline and under its
// Content-Security-Policy.
//
//go:embed assets
var assets embed.FS

// parseTemplates parses the page templates with their functions.
func parseTemplates() *template.Template {
	funcs := template.FuncMap{
		"num": num,
		"ago": ago,
		"utc": func(t time.Time) string {
			if t.IsZero() {
				return ""
			}
			return t.UTC().Format("2006-01-02 15:04:05 UTC")
		},
		"seconds": func(f float64) string { return fmt.Sprintf("%.1fs", f) },
		"deref":   func(f *float64) float64 { return *f },
		"pct": func(done, of int) int {
			if of <= 0 {
				return 0
			}
			return min(100*done/of, 100)
		},
	}
	return template.Must(template.New("").Funcs(funcs).ParseFS(assets, "assets/templates/*.html"))
}

// staticFiles serves the stylesheet and the script.
func staticFiles() http.Handler {
	sub, _ := fs.Sub(assets, "assets/static") // the directory is embedded
	return http.FileServerFS(sub)
}

// ago says how long ago t was, roughly: "5s", "3m", "2h", "4d"; "" for a
// zero t.
func ago(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	d := time.Since(t)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}
