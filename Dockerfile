# Build: docker build -t ratelab .
# Run:   docker run -p 8080:8080 ratelab
# Other subcommands (the entrypoint is "/ratelab serve"):
#        docker run --rm -i --entrypoint /ratelab ratelab lint --format sarif - < policy.yaml
#
# The base images are named by tag only: pin them by digest
# (golang:1.26@sha256:…, static-debian12:nonroot@sha256:…) where the registry
# is reachable, so that a rebuild takes the same bytes.

FROM golang:1.26 AS build
WORKDIR /src
# Modules first, so this layer is cached until go.mod or go.sum change.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The *_templ.go files are committed, so the build needs no templ step.
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/ratelab ./cmd/ratelab

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/ratelab /ratelab
USER nonroot:nonroot
EXPOSE 8080
# The image has no shell and no curl: the binary checks itself (GET /healthz
# on the default address, 2 s timeout, exit 0 healthy or 1).
HEALTHCHECK --interval=30s --timeout=5s --start-period=5s --retries=3 \
	CMD ["/ratelab", "healthcheck", "-url", "http://127.0.0.1:8080/healthz"]
ENTRYPOINT ["/ratelab", "serve"]
CMD ["-addr", ":8080"]
