package leakscan

import (
	"crypto/rand"
	"strconv"
)

var randRead = rand.Read

func itoa(i int) string { return strconv.Itoa(i) }
