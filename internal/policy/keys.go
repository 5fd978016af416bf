package policy

// Keys of the policy file.
const (
	keyPromptBudget   = "prompt_budget"
	keyCooldown       = "no_response_cooldown"
	keyRateLimit      = "rate_limit"
	keyCDPURL         = "cdp_url"
	keyCDPAllowHosts  = "cdp_allow_hosts"
	keyPromptOpener   = "prompt_opener"
	keyVia            = "via"
	keyPrompt         = "prompt"
	keyPinentry       = "pinentry"
	keyDriven         = "driven"
	keyRoomBrowser    = "clean_room_browser"
	keyService        = "service"
	keyFrameAncestors = "frame_ancestors"
	keyAgents         = "agents"
	keyFields         = "fields"
	keyAllowVia       = "allow_via"
	keyThen           = "then"
	keySubdomains     = "subdomains"
	keyApproval       = "approval"
	keyLease          = "lease"
	keyRemember       = "remember"
	keyPassword       = "password"
	keyOTP            = "otp"
)

// topKeys lists the settings valid at the top of the file, in the order
// Format writes them; the [service."HOST"] tables follow them.
func topKeys() []string {
	return []string{keyPromptBudget, keyCooldown, keyRateLimit, keyCDPURL, keyCDPAllowHosts, keyPromptOpener, keyVia, keyPrompt, keyPinentry, keyDriven, keyRoomBrowser}
}

// ruleKeys lists the keys of a [service."HOST"] table, in the order Format
// writes them; the password and otp source tables follow them.
func ruleKeys() []string {
	return []string{keyFrameAncestors, keyAgents, keyFields, keyAllowVia, keyThen, keyDriven, keySubdomains, keyApproval, keyLease, keyRemember}
}

// help says what a valid value of key looks like in the TOML file.
func help(key string) string {
	switch key {
	case keyPromptBudget:
		return `a duration from 5s to 15m, like "90s"`
	case keyCooldown:
		return `a duration up to 24h, like "10m", or "0s" for none`
	case keyRateLimit:
		return `requests/window, like "6/1m"`
	case keyCDPURL:
		return `a URL like "http://127.0.0.1:9222"`
	case keyCDPAllowHosts:
		return `a list of host names or IP addresses, like ["devbox.lan", "10.0.0.5"]`
	case keyPromptOpener:
		return `"system" or "cdp-tab"`
	case keyVia:
		return `"auto", "extension" or "cdp"`
	case keyPrompt:
		return `"auto", "native" or "browser"`
	case keyPinentry:
		return `an absolute path, like "/usr/bin/pinentry-gtk-2"`
	case keyDriven:
		return `"clean-room" or "in-page"`
	case keyRoomBrowser:
		return `an absolute path to a Chromium-family browser, like "/usr/bin/chromium"`
	case keyService:
		return `one table per service, like [service."github.com"]`
	case keyFrameAncestors:
		return `a list of origins, like ["https://portal.example.net"]`
	case keyAgents:
		return `a list of absolute executable paths, like ["/usr/local/bin/claude"]`
	case keyFields:
		return `a list of field kinds, like ["password", "otp"]`
	case keyAllowVia:
		return `a list of paths, like ["extension"]`
	case keyThen:
		return `"submit" or "none"`
	case keySubdomains, keyRemember:
		return "true or false"
	case keyApproval:
		return `"each", "lease" or "none"`
	case keyLease:
		return `a duration from 1m to 1h, like "30m"`
	case keyPassword, keyOTP:
		return `a table naming the source, like [service."github.com".password] with source = "pass"`
	}
	return `a string, like "work/github"`
}
