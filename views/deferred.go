package views

import (
	"context"
	"strings"
)

// deferredTable is c's table (chartTable) as HTML text, for an update's
// data-deferred-table attribute. templ escapes every cell, and the
// attribute escapes the text again, so the browser's attribute value is
// exactly the table's markup.
func deferredTable(c Chart) string {
	var b strings.Builder
	if err := chartTable(c).Render(context.Background(), &b); err != nil {
		return "" // a strings.Builder does not fail; the panel stays empty
	}
	return b.String()
}
