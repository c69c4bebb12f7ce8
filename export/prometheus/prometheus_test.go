package prometheus_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/export"
	"github.com/ratelab/ratelab/export/exporttest"
	prom "github.com/ratelab/ratelab/export/prometheus"
	"github.com/ratelab/ratelab/policy"
)

// The rule files' checks with Prometheus's own loader, PromQL parser and
// engine are in conformance/prometheus, a module of its own.

func render(t *testing.T, p policy.Policy, gw string) export.Export {
	t.Helper()
	e, err := prom.Render(p, export.Options{Gateway: gw})
	if err != nil {
		t.Fatalf("%s: %v", gw, err)
	}
	return e
}

func TestUnknownGateway(t *testing.T) {
	_, err := prom.Render(exporttest.Named(t, "minimal"), export.Options{Gateway: "apache"})
	var xe *export.Error
	if !errors.As(err, &xe) {
		t.Fatalf("error %v (%T), want *export.Error", err, err)
	}
	if xe.Target != "prometheus" || !strings.Contains(xe.Reason, `"apache"`) || !strings.Contains(xe.Reason, "envoy-ratelimit") {
		t.Errorf("error %q does not name the gateway and the choices", err)
	}
}

// TestDefaultGatewayIsNginx: "" means nginx.
func TestDefaultGatewayIsNginx(t *testing.T) {
	p := exporttest.Named(t, "minimal")
	def, err := prom.Render(p, export.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(def.Body, render(t, p, "nginx").Body) {
		t.Error(`Gateway "" renders differently from "nginx"`)
	}
}
