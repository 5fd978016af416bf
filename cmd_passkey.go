package main

import (
	"fmt"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/request"
)

type passkeyCmd struct {
	Add passkeyAddCmd `cmd:"" help:"Add a passkey for your agents on a site: approve it, then click the site's own \"add a passkey\" button in the active tab."`
}

type passkeyAddCmd struct {
	Service string        `required:"" help:"The site, e.g. github.com (as for fillgate fill)."`
	Account string        `help:"The account the passkey is kept under (the site's user name); leave it out for the service's only one."`
	JSON    bool          `name:"json" help:"Print the result as one JSON object."`
	Timeout time.Duration `help:"Give yourself at most this long to approve, and the site as long to ask (e.g. 60s)."`
	Tab     *int64        `help:"Pin the tab (the extension's numeric tab id)."`
	Socket  string        `help:"Ask the fillgate host on this socket instead of the local one." type:"path"`
}

func (passkeyAddCmd) Help() string {
	return `fillgate asks you, in a dialog on your desktop, to approve a passkey for
your agents on the site of the active tab; then it arms that tab for one
navigator.credentials.create(): click the site's own "add a passkey"
button. fillgate makes the key pair, keeps the private key in the OS
keyring under the service and account, and hands the site an attestation
of format "none". The site lists the passkey like any other; remove it
there to revoke it. Agents then sign in with
fillgate fill --service SITE --field passkey.`
}

func (c *passkeyAddCmd) Run(a *app) error {
	if c.Timeout < 0 {
		return usageError{fmt.Errorf("--timeout must not be negative")}
	}
	req := fill.Request{Service: c.Service, Field: fill.FieldPasskey, Enrol: true, Account: c.Account, Timeout: c.Timeout, Tab: c.Tab}
	return a.runRequest(req, request.Options{Via: "extension", Client: "fillgate passkey add", Socket: c.Socket}, c.JSON)
}
