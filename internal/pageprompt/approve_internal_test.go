package pageprompt

import (
	"context"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
)

// offeringPrompt is a prompt with a saved value to approve for one of two
// accounts, a KeePassXC database password to type first, and the Remember
// box.
func offeringPrompt(t *testing.T, info fill.PromptInfo) *prompt {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	fp, err := Start(ctx, info)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { _ = fp.Close() })
	p := fp.(*prompt)
	get(p, false, "none")
	return p
}

func offers() fill.PromptInfo {
	return fill.PromptInfo{
		Agent: fill.Agent{Name: "claude", PID: 1}, Service: "github.com", Origin: "https://github.com",
		Field: fill.FieldPassword, Budget: time.Minute,
		From: "from KeePassXC: work/github in /db.kdbx", Accounts: []string{"alice", "bob"},
		Ask: "the password of the KeePassXC database /db.kdbx", Remember: true,
	}
}

// answer is a POST of action with payload sealed for that action.
func answer(t *testing.T, p *prompt, action, payload string) int {
	t.Helper()
	body := "csrf=" + string(p.csrf) + "&action=" + action + "&answer=" + sealTo(t, p.page.keyBytes(t), answerInfo(p.path, action), []byte(payload))
	return post(p, body).Code
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// TestAnswersOnlyWhatThePromptOffers: an approval of a saved value the
// prompt does not offer, an account it did not offer (or none, when it
// offers a choice), a missing or unasked store password, a Remember it did
// not offer: each is refused, the prompt stays open, and the right answer
// then goes through.
func TestAnswersOnlyWhatThePromptOffers(t *testing.T) {
	plain := offers()
	plain.From, plain.Accounts, plain.Ask, plain.Remember = "", nil, "", false
	noAsk := offers()
	noAsk.Ask, noAsk.Accounts = "", nil
	for _, c := range []struct {
		name    string
		info    fill.PromptInfo
		action  string
		payload string
	}{
		{"approve with nothing saved", plain, actionApprove, `{}`},
		{"remember not offered", plain, actionSubmit, `{"value":"` + b64("v") + `","remember":true}`},
		{"an account with none offered", plain, actionSubmit, `{"value":"` + b64("v") + `","account":"alice"}`},
		{"an account not offered", offers(), actionApprove, `{"account":"mallory","ask":"` + b64("db") + `"}`},
		{"no account picked", offers(), actionApprove, `{"ask":"` + b64("db") + `"}`},
		{"no store password", offers(), actionApprove, `{"account":"alice"}`},
		{"an empty store password", offers(), actionApprove, `{"account":"alice","ask":""}`},
		{"a store password not asked for", noAsk, actionApprove, `{"ask":"` + b64("db") + `"}`},
		{"an approval that remembers", noAsk, actionApprove, `{"remember":true}`},
		{"a typed account not offered", offers(), actionSubmit, `{"value":"` + b64("v") + `","account":"mallory"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := offeringPrompt(t, c.info)
			if code := answer(t, p, c.action, c.payload); code != http.StatusBadRequest {
				t.Fatalf("status %d, want 400", code)
			}
			if p.isEnded() {
				t.Fatal("a refused answer ended the prompt")
			}
		})
	}

	p := offeringPrompt(t, offers())
	if code := answer(t, p, actionApprove, `{"account":"bob","ask":"`+b64("db-pw")+`"}`); code != http.StatusOK {
		t.Fatalf("the right approval: status %d", code)
	}
	a, err := p.Wait(context.Background())
	if err != nil || !a.Approved || a.Account != "bob" || string(a.Asked) != "db-pw" || a.Value != nil || a.Remember {
		t.Fatalf("answer %v approved %v account %q value %v remember %v; store password matched %v",
			err, a.Approved, a.Account, a.Value != nil, a.Remember, string(a.Asked) == "db-pw")
	}
	a.Zero()

	p = offeringPrompt(t, offers())
	if code := answer(t, p, actionSubmit, `{"value":"`+b64("typed")+`","remember":true,"account":"alice"}`); code != http.StatusOK {
		t.Fatalf("a typed value to remember: status %d", code)
	}
	a, err = p.Wait(context.Background())
	if err != nil || a.Approved || a.Account != "alice" || string(a.Value) != "typed" || !a.Remember || a.Asked != nil {
		t.Fatalf("answer %v approved %v account %q remember %v; value matched %v", err, a.Approved, a.Account, a.Remember, string(a.Value) == "typed")
	}
	a.Zero()
}

// TestApproveIsSealedForItsAction: a submit's sealed answer posted as an
// approval does not decrypt, nor the other way round.
func TestApproveIsSealedForItsAction(t *testing.T) {
	p := offeringPrompt(t, offers())
	sealed := sealTo(t, p.page.keyBytes(t), answerInfo(p.path, actionSubmit), []byte(`{"account":"alice","ask":"`+b64("db")+`"}`))
	w := post(p, "csrf="+string(p.csrf)+"&action=approve&answer="+sealed)
	if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "does not decrypt") {
		t.Errorf("a submit's answer as an approval: %d %q", w.Code, w.Body.String())
	}
}

func TestStartRefusesChoicesWithoutASavedValue(t *testing.T) {
	for name, change := range map[string]func(*fill.PromptInfo){
		"accounts, nothing saved": func(i *fill.PromptInfo) { i.From = "" },
		"ask, nothing saved":      func(i *fill.PromptInfo) { i.From, i.Accounts = "", nil },
		"one account":             func(i *fill.PromptInfo) { i.Accounts = []string{"alice"} },
		"a repeated account":      func(i *fill.PromptInfo) { i.Accounts = []string{"alice", "alice"} },
		"an empty account":        func(i *fill.PromptInfo) { i.Accounts = []string{"alice", ""} },
	} {
		info := offers()
		change(&info)
		if p, err := Start(context.Background(), info); err == nil {
			_ = p.Close()
			t.Errorf("%s: started", name)
		}
	}
}
