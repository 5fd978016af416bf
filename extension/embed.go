// Package extension embeds fillgate's MV3 browser extension: the files
// `fillgate install` unpacks for the user to load, and the in-page function
// the CDP fallback runs in an isolated world.
package extension

import "embed"

// Files holds the extension as it is loaded unpacked: manifest.json at the
// root.
//
//go:embed manifest.json *.js *.html *.css icons
var Files embed.FS

// InPageJS is the source of extension/inpage.js: one function,
// fillgateInPage(op, arg), shared by the extension and the CDP fallback.
//
//go:embed inpage.js
var InPageJS string
