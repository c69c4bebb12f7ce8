package export

import (
	"regexp"
	"strings"

	"github.com/ratelab/ratelab/policy"
)

// PathPattern is the body of a regular expression (RE2 syntax, which
// Go, Traefik and Kong share) matching exactly the paths an endpoint's
// template matches: "/" and each segment, a {name} as one non-empty
// segment ([^/]+), every other segment literally. Callers anchor it as
// their gateway wants ("^…$", Kong's "~…$").
func PathPattern(template string) string {
	var b strings.Builder
	for _, s := range strings.Split(strings.TrimPrefix(template, "/"), "/") {
		b.WriteString("/")
		if policy.IsPlaceholder(s) {
			b.WriteString("[^/]+")
		} else {
			b.WriteString(regexp.QuoteMeta(s))
		}
	}
	return b.String()
}
