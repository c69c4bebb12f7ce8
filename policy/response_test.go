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

func TestServiceAndModeDefaults(t *testing.T) {
	var s Service
	var d Defaults
	if s.Enforcing() != "shared" || s.StoreFailureMode() != FailOpen || d.EffectiveMode() != ModeEnforce {
		t.Errorf("zero: %q %q %q, want shared fail_open enforce", s.Enforcing(), s.StoreFailureMode(), d.EffectiveMode())
	}
	s = Service{Enforcement: "local", OnStoreFailure: FailClosed}
	d = Defaults{Mode: ModeShadow}
	if s.Enforcing() != "local" || s.StoreFailureMode() != FailClosed || d.EffectiveMode() != ModeShadow {
		t.Errorf("set: %q %q %q, want local fail_closed shadow", s.Enforcing(), s.StoreFailureMode(), d.EffectiveMode())
	}
}
