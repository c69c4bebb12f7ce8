package policy

import "testing"

func TestResponseDefaults(t *testing.T) {
	var zero Response
	if zero.Code() != 429 || len(zero.Styles()) != 1 || zero.Styles()[0] != HeadersIETF || !zero.SendsRetryAfter() {
		t.Errorf("zero response: %d %v %v, want 429 [ietf] true", zero.Code(), zero.Styles(), zero.SendsRetryAfter())
	}
	set := Response{Status: 503, Headers: []HeaderStyle{}, RetryAfter: new(false)}
	if set.Code() != 503 || len(set.Styles()) != 0 || set.SendsRetryAfter() {
		t.Errorf("set response: %d %v %v, want 503 [] false", set.Code(), set.Styles(), set.SendsRetryAfter())
	}
}
