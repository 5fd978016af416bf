package websession

import (
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
)

// FromCDP is a cookie as the DevTools Protocol reports it (Storage.getCookies,
// Network.getCookies), in this package's shape. CDP writes a domain cookie's
// domain with a leading dot and a host-only cookie's without.
func FromCDP(c *network.Cookie) Cookie {
	out := Cookie{
		Name: c.Name, Value: c.Value,
		Domain:   strings.TrimPrefix(c.Domain, "."),
		HostOnly: !strings.HasPrefix(c.Domain, "."),
		Path:     c.Path, Secure: c.Secure, HTTPOnly: c.HTTPOnly,
		SameSite: string(c.SameSite),
	}
	if !c.Session && c.Expires > 0 {
		out.Expires = c.Expires
	}
	if c.PartitionKey != nil {
		out.Partition = &Partition{TopLevelSite: c.PartitionKey.TopLevelSite, CrossSiteAncestor: c.PartitionKey.HasCrossSiteAncestor}
	}
	return out
}

// CDPParam is c as Storage.setCookies (or Network.setCookies) takes it,
// keeping its exact shape: a host-only cookie is set by URL with no
// domain (CDP makes any domain it is given a domain cookie), a domain
// cookie with its leading dot, SameSite only when the site set one (an
// unset one stays unset: the browser treats it as Lax either way, and
// None must be said), the partition key, and the expiry (none for a
// session cookie).
func (c Cookie) CDPParam() *network.CookieParam {
	p := &network.CookieParam{
		Name: c.Name, Value: c.Value, Path: c.Path,
		Secure: c.Secure, HTTPOnly: c.HTTPOnly,
		SameSite: network.CookieSameSite(c.SameSite),
	}
	if c.HostOnly {
		p.URL = c.URL()
	} else {
		p.Domain = "." + c.Domain
	}
	if c.Expires > 0 {
		p.Expires = cdp.TimeSinceEpoch(c.Expires)
	}
	if c.Partition != nil {
		p.PartitionKey = &network.CookiePartitionKey{TopLevelSite: c.Partition.TopLevelSite, HasCrossSiteAncestor: c.Partition.CrossSiteAncestor}
	}
	return p
}

// CDPDelete is the Network.deleteCookies call that removes c's slot.
func (c Cookie) CDPDelete() *network.DeleteCookiesParams {
	p := &network.DeleteCookiesParams{Name: c.Name, Path: c.Path}
	if c.HostOnly {
		p.URL = c.URL()
	} else {
		p.Domain = "." + c.Domain
	}
	if c.Partition != nil {
		p.PartitionKey = &network.CookiePartitionKey{TopLevelSite: c.Partition.TopLevelSite, HasCrossSiteAncestor: c.Partition.CrossSiteAncestor}
	}
	return p
}
