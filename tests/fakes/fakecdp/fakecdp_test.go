package fakecdp

import (
	"encoding/json"
	"net/http"
	"testing"
)

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

func TestDiscoveryEndpoints(t *testing.T) {
	s := New(t)
	p := s.AddPage("https://a.example/login")
	p.Root.AddFrame("https://b.example", true)
	var version map[string]string
	getJSON(t, s.URL+"/json/version", &version)
	if version["webSocketDebuggerUrl"] != s.WebSocketURL() {
		t.Fatalf("/json/version = %v", version)
	}
	s.SetWebSocketURL("ws://192.0.2.1:9222/devtools/browser/x")
	getJSON(t, s.URL+"/json/version", &version)
	if version["webSocketDebuggerUrl"] != "ws://192.0.2.1:9222/devtools/browser/x" {
		t.Fatalf("override not served: %v", version)
	}
	var list []map[string]string
	getJSON(t, s.URL+"/json/list", &list)
	if len(list) != 2 || list[0]["type"] != "page" || list[1]["type"] != "iframe" {
		t.Fatalf("/json/list = %v", list)
	}
	s.CloseTarget(p.ID)
	getJSON(t, s.URL+"/json/list", &list)
	if len(list) != 1 {
		t.Fatalf("a closed target is still listed: %v", list)
	}
}
