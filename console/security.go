package console

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// contentSecurityPolicy is the console's: its own scripts and styles only
// (every one a file it serves: no inline script or style), no frames, forms
// posting to itself.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// csrfCookie names the cookie holding a browser's CSRF secret; a form's
// token is its HMAC under the console's key.
const csrfCookie = "sqsloop_console_csrf"

// secure sets the security headers, authenticates the request, and
// refuses a state-changing one without its CSRF token.
func (c *Console) secure(next http.Handler) http.Handler {
	protect := http.NewCrossOriginProtection()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		if !c.authenticated(w, r) {
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if err := protect.Check(r); err != nil {
				http.Error(w, "forbidden: a cross-origin request", http.StatusForbidden)
				return
			}
			if !c.validCSRF(r) {
				http.Error(w, "forbidden: no valid CSRF token (reload the page and try again)", http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// authenticated reports whether r may be served, answering it when not:
// with credentials configured, it needs them; without, only a loopback
// client is served.
func (c *Console) authenticated(w http.ResponseWriter, r *http.Request) bool {
	a := c.opts.Auth
	switch {
	case a.External:
		return true
	case !a.configured():
		if loopback(r.RemoteAddr) {
			return true
		}
		http.Error(w, "forbidden: the console has no authentication configured and answers loopback clients only", http.StatusForbidden)
		return false
	}
	if a.BearerToken != "" {
		if got, ok := bearer(r); ok && subtle.ConstantTimeCompare([]byte(got), []byte(a.BearerToken)) == 1 {
			return true
		}
	}
	if a.Username != "" {
		u, p, ok := r.BasicAuth()
		if ok && subtle.ConstantTimeCompare([]byte(u), []byte(a.Username)) == 1 && subtle.ConstantTimeCompare([]byte(p), []byte(a.Password)) == 1 {
			return true
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="sqsloop console", charset="UTF-8"`)
	} else {
		w.Header().Set("WWW-Authenticate", `Bearer realm="sqsloop console"`)
	}
	http.Error(w, "unauthorized", http.StatusUnauthorized)
	return false
}

// bearer returns the token of an "Authorization: Bearer" header.
func bearer(r *http.Request) (string, bool) {
	const scheme = "Bearer "
	h := r.Header.Get("Authorization")
	if len(h) <= len(scheme) || !strings.EqualFold(h[:len(scheme)], scheme) {
		return "", false
	}
	return h[len(scheme):], true
}

// who names the user of r for the action log.
func (c *Console) who(r *http.Request) string {
	a := c.opts.Auth
	if a.Who != nil {
		return a.Who(r)
	}
	if u, _, ok := r.BasicAuth(); ok && a.Username != "" {
		return u
	}
	if _, ok := bearer(r); ok && a.BearerToken != "" {
		return "bearer token"
	}
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// loopback reports whether a request's RemoteAddr is a loopback address
// (or a Unix socket's: empty or "@").
func loopback(remote string) bool {
	if remote == "" || remote == "@" {
		return true
	}
	ap, err := netip.ParseAddrPort(remote)
	return err == nil && ap.Addr().Unmap().IsLoopback()
}

// csrfToken returns the CSRF token of r's browser, setting its secret
// cookie on w when it has none yet.
func (c *Console) csrfToken(w http.ResponseWriter, r *http.Request) string {
	secret := ""
	if ck, err := r.Cookie(csrfCookie); err == nil && ck.Value != "" {
		secret = ck.Value
	} else {
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		secret = base64.RawURLEncoding.EncodeToString(b)
		path := c.opts.Prefix
		if path == "" {
			path = "/"
		}
		http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: secret, Path: path, HttpOnly: true, SameSite: http.SameSiteStrictMode,
			Secure: r.TLS != nil})
	}
	return c.sign(secret)
}

func (c *Console) sign(secret string) string {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte(secret))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// validCSRF reports whether r carries its browser's CSRF token (form field
// csrf, or header X-CSRF-Token).
func (c *Console) validCSRF(r *http.Request) bool {
	ck, err := r.Cookie(csrfCookie)
	if err != nil || ck.Value == "" {
		return false
	}
	got := r.Header.Get("X-CSRF-Token")
	if got == "" {
		got = r.PostFormValue("csrf")
	}
	return got != "" && hmac.Equal([]byte(got), []byte(c.sign(ck.Value)))
}
