package pagestream

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
)

// Proxy is a reverse proxy to target that passes every HTML page through
// rewrite (the page's body in, the body to send out): how a test adds
// its control script to a site's pages. Pages come uncompressed and are
// not cached.
func Proxy(target *url.URL, rewrite func(body []byte) []byte) http.Handler {
	return &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Header.Del("Accept-Encoding") // bodies are rewritten: plain text only
		},
		ModifyResponse: func(res *http.Response) error {
			if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
				return nil
			}
			body, err := io.ReadAll(res.Body)
			_ = res.Body.Close()
			if err != nil {
				return err
			}
			body = rewrite(body)
			res.Body = io.NopCloser(bytes.NewReader(body))
			res.ContentLength = int64(len(body))
			res.Header.Set("Content-Length", strconv.Itoa(len(body)))
			res.Header.Set("Cache-Control", "no-store")
			return nil
		},
	}
}
