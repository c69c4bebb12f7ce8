module github.com/ratelab/ratelab/conformance/golibs

go 1.26.7

require (
	github.com/ratelab/ratelab v0.0.0
	github.com/throttled/throttled/v2 v2.15.0
	go.uber.org/ratelimit v0.3.1
	golang.org/x/time v0.16.0
)

require github.com/benbjohnson/clock v1.3.0 // indirect

replace github.com/ratelab/ratelab => ../..
