package server

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/chartset"
	"github.com/ratelab/ratelab/design"
	"github.com/ratelab/ratelab/views"
)

// embedPath serves one chart of a design alone, for an iframe in API
// documentation: /embed/admitted?<design>&theme=dark. The URL carries the
// whole design, so a docs link never breaks and never changes meaning.
const embedPath = "/embed/:chart"

// embedCache is how long browsers and CDNs may keep an embed: the URL is
// the design, so only a new ratelab version changes the bytes, and the
// strong ETag catches that on revalidation.
const embedCache = "public, max-age=86400"

// embedThemes are the values of the theme parameter; the first is the
// default.
var embedThemes = []string{"auto", "light", "dark"}

// handleEmbed answers GET /embed/{chart}?<design>&theme=…: the chart alone
// in a page that may be framed by any site; /embed/{chart}.svg is the same
// chart as a static SVG image (views.RenderSVG), light by default. An unknown chart is a 404
// naming the charts; a design or theme the designer refuses is a 422 in
// plain text, which is what an iframe can show. A chart is the same bytes
// for the same canonical design and theme, so renders are cached by them.
func (pg *pages) handleEmbed(c echo.Context) error {
	slug, svg := strings.CutSuffix(c.Param("chart"), ".svg")
	if !slices.Contains(views.ChartSlugs, slug) {
		return echo.NewHTTPError(http.StatusNotFound,
			fmt.Sprintf("no chart %q; the charts are %s", slug, strings.Join(views.ChartSlugs, ", ")))
	}
	raw := c.Request().URL.RawQuery
	q, _ := url.ParseQuery(raw)
	theme := q.Get("theme")
	if theme == "" {
		theme = embedThemes[0]
	}
	if svg && theme == "auto" {
		// An image cannot follow the reader's scheme without a style
		// sheet; SVG embeds are light unless asked otherwise.
		theme = "light"
	}
	if !slices.Contains(embedThemes, theme) {
		return echo.NewHTTPError(http.StatusUnprocessableEntity,
			fmt.Sprintf("theme: %q is not a theme; want %s", theme, strings.Join(embedThemes, ", ")))
	}
	parsed := design.ParseQuery(raw)
	key := fmt.Sprintf("embed\x00%s\x00%t\x00%s\x00%s", slug, svg, theme, parsed.Query())
	if r, ok := pg.cache.get(key); ok {
		return cacheable(c, r.contentType, r.body)
	}
	w, err := enterHeavy(c, pg.gate, pg.timeout)
	if err != nil {
		return err
	}
	defer w.leave()
	d := newDesignPage(parsed)
	rv, err := d.resultsOf(c.Request().Context())
	if err != nil {
		return err
	}
	if len(rv.Problems) > 0 {
		msgs := make([]string, len(rv.Problems))
		for i, p := range rv.Problems {
			msgs[i] = p.Message
		}
		return echo.NewHTTPError(http.StatusUnprocessableEntity, "this chart's design has problems: "+strings.Join(msgs, "; "))
	}
	if rv.ChartsError != "" {
		return echo.NewHTTPError(http.StatusUnprocessableEntity, "this chart's pattern has problems: "+rv.ChartsError)
	}
	i := slices.IndexFunc(rv.Charts, func(ch views.Chart) bool { return views.ChartSlug(ch.ID) == slug })
	if i < 0 {
		return fmt.Errorf("designer made no %s chart", slug)
	}
	if svg {
		body, err := views.RenderSVG(rv.Charts[i], views.SVGOptions{Theme: views.Theme(theme), Subtitle: policyLine(d, rv, slug)})
		if err != nil {
			return fmt.Errorf("render %s.svg: %w", slug, err)
		}
		pg.cache.put(key, rendered{contentType: "image/svg+xml", body: body})
		return cacheable(c, "image/svg+xml", body)
	}
	var buf bytes.Buffer
	v := views.EmbedView{Chart: rv.Charts[i], Theme: theme, Policy: policyLine(d, rv, slug), DesignURL: "/?" + rv.Query}
	if err := views.EmbedPage(v).Render(c.Request().Context(), &buf); err != nil {
		return fmt.Errorf("render embed: %w", err)
	}
	pg.cache.put(key, rendered{contentType: "text/html; charset=utf-8", body: buf.Bytes()})
	return cacheable(c, "text/html; charset=utf-8", buf.Bytes())
}

// policyLine is the one-line caption of a design's chart: the policy and
// the pattern for the policy's own charts (chartset.PolicyCaption, as
// ratelab docs writes it), the per-client limit and the pattern for the
// calculator's (chartset.Caption).
func policyLine(d *designPage, rv views.ResultsView, slug string) string {
	info := chartset.Info{Arrivals: rv.Pattern.Arrivals}
	name := algorithms.PatternName(rv.Pattern.Name)
	if slices.Contains(views.PolicyChartSlugs, slug) || rv.Result == nil {
		p, _ := d.policy()
		return chartset.PolicyCaption(p, name, info)
	}
	return chartset.Caption(*rv.Result, name, info)
}

// cacheable writes body with embedCache and a strong ETag (a hash of the
// bytes), or a 304 when the request already has these bytes
// (http.ServeContent). A strong
// ETag names one representation, so the body is gzipped here, when the
// client accepts it, under its own ETag ("…-gzip"); the compress
// middleware leaves an encoded response alone. gzip without a name or
// time in its header is deterministic, so the same URL gives the same
// bytes either way.
func cacheable(c echo.Context, contentType string, body []byte) error {
	sum := sha256.Sum256(body)
	tag := hex.EncodeToString(sum[:16])
	req := c.Request()
	gz := req.Method != http.MethodHead && len(body) >= minGzipLength && acceptsGzip(req.Header.Get(echo.HeaderAcceptEncoding))
	etag := `"` + tag + `"`
	if gz {
		etag = `"` + tag + `-gzip"`
	}
	h := c.Response().Header()
	h.Set(echo.HeaderCacheControl, embedCache)
	h.Set("ETag", etag)
	h.Set(echo.HeaderContentType, contentType)
	if gz {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		if _, err := zw.Write(body); err != nil {
			return err
		}
		if err := zw.Close(); err != nil {
			return err
		}
		h.Set(echo.HeaderContentEncoding, "gzip")
		body = buf.Bytes()
	}
	// ServeContent answers If-None-Match (304) and ranges from the ETag
	// set above, as for the static assets.
	http.ServeContent(c.Response(), req, "", time.Time{}, bytes.NewReader(body))
	return nil
}
