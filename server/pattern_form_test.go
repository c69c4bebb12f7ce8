package server

import "testing"

// TestPatternSelectReloadsTheForm: the pattern select asks for the whole
// form again when it changes, and the form it gets back (the form's fields
// with the new pattern, as htmx sends them) shows that pattern's defaults
// as placeholders, window_boundary's window being the design's.
func TestPatternSelectReloadsTheForm(t *testing.T) {
	doc, _ := getDoc(t, "/")
	sel := doc.Find("select#f-pattern")
	if sel.Length() != 1 || sel.AttrOr("hx-get", "") != "/" || sel.AttrOr("hx-include", "") != "closest form" {
		t.Fatalf("the pattern select does not reload the form: %d found, hx-get %q", sel.Length(), sel.AttrOr("hx-get", ""))
	}
	tests := []struct {
		query string
		want  map[string]string // input id → placeholder
	}{
		{"/?capacity=2000&p99=5&window=90&pattern=window_boundary&pattern.rate=&pattern.count=&pattern.window=",
			map[string]string{"f-pattern-window": "90", "f-pattern-count": "100"}},
		{"/?capacity=2000&p99=5&pattern=idle_then_burst&pattern.rate=&pattern.count=&pattern.idle=",
			map[string]string{"f-pattern-count": "100", "f-pattern-idle": "5"}},
		{"/?capacity=2000&p99=5&pattern=ramp&pattern.rate=&pattern.to=",
			map[string]string{"f-pattern-rate": "1", "f-pattern-to": "40"}},
	}
	for _, tt := range tests {
		doc, _ := getDoc(t, tt.query)
		if got := doc.Find("select#f-pattern option[selected]").AttrOr("value", ""); got == "" {
			t.Errorf("%s: no pattern selected", tt.query)
		}
		for id, want := range tt.want {
			if got := doc.Find("#"+id).AttrOr("placeholder", ""); got != want {
				t.Errorf("%s: #%s placeholder %q, want %q", tt.query, id, got, want)
			}
		}
	}
}
