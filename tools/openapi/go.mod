// The generator of the API document's schemas (see main.go), kept out of
// the main module's graph.
module github.com/ratelab/ratelab/tools/openapi

go 1.26.7

require (
	github.com/invopop/jsonschema v0.14.0
	github.com/ratelab/ratelab v0.0.0
)

require (
	github.com/bahlo/generic-list-go v0.2.0 // indirect
	github.com/buger/jsonparser v1.1.2 // indirect
	github.com/pb33f/ordered-map/v2 v2.3.1 // indirect
	go.yaml.in/yaml/v4 v4.0.0-rc.2 // indirect
)

replace github.com/ratelab/ratelab => ../..
