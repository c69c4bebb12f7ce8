# Build: docker build -t ratelab .
# Run:   docker run -p 8080:8080 ratelab

FROM golang:1.26 AS build
WORKDIR /src
# Modules first, so this layer is cached until go.mod or go.sum change.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The *_templ.go files are committed, so the build needs no templ step.
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/ratelab ./cmd/web

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/ratelab /ratelab
USER nonroot:nonroot
EXPOSE 8080
ENTRYPOINT ["/ratelab"]
CMD ["-addr", ":8080"]
