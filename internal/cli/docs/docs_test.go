package docs

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"html"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/ratelab/ratelab/algorithms"
	"github.com/ratelab/ratelab/chartset"
	"github.com/ratelab/ratelab/design"
	"github.com/ratelab/ratelab/policy"
	"github.com/ratelab/ratelab/views"
)

const tiered = "../../../policy/testdata/examples/tiered.yaml"

func runDocs(t *testing.T, tty bool, args ...string) (int, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, strings.NewReader(""), &out, &errOut, tty)
	if out.Len() != 0 {
		t.Errorf("stdout %q, want nothing", out.String())
	}
	return code, errOut.String()
}

// tree reads every file under dir by relative path.
func tree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		files[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestDocsDeterministic: two runs write the same files, byte for byte:
// every pattern × chart as SVG and HTML, the limits, the OpenAPI fragment
// and the index (9 patterns × 6 charts × 2 + 3 files).
func TestDocsDeterministic(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	for _, dir := range []string{a, b} {
		if code, errOut := runDocs(t, false, "-o", dir, tiered); code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
	}
	ta, tb := tree(t, a), tree(t, b)
	if want := len(algorithms.Patterns)*len(views.PolicyChartSlugs)*2 + 3; len(ta) != want {
		t.Errorf("%d files, want %d", len(ta), want)
	}
	for name, data := range ta {
		if !bytes.Equal(data, tb[name]) {
			t.Errorf("%s differs between two runs", name)
		}
	}
	for name, data := range ta {
		if strings.HasSuffix(name, ".svg") {
			if err := parseXML(data); err != nil {
				t.Errorf("%s is not XML: %v", name, err)
			}
		}
	}
}

func parseXML(b []byte) error {
	d := xml.NewDecoder(bytes.NewReader(b))
	for {
		if _, err := d.Token(); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
}

// TestDocsSameAsServer: a chart in the folder is the chart chartset draws
// for the policy's design and the pattern's defaults, rendered as the
// server's /embed/{chart}.svg renders it; the HTML page holds the same SVG
// and no script.
func TestDocsSameAsServer(t *testing.T) {
	dir := t.TempDir()
	if code, errOut := runDocs(t, false, "-o", dir, "-patterns", "window_boundary", "-charts", "policy-cumulative,policy-rejected", "-theme", "dark", tiered); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	p, err := policy.DecodeFile(tiered, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The designer charts window_boundary at the policy's own window.
	pattern := design.PatternDefaults(p, algorithms.PatternWindowBoundary)
	if pattern.Window != p.Sizing.Window {
		t.Fatalf("window_boundary at %v, want the policy's window %v", pattern.Window, p.Sizing.Window)
	}
	charts, info, err := chartset.Policy(p, pattern)
	if err != nil {
		t.Fatal(err)
	}
	files := tree(t, dir)
	if len(files) != 2*2+3 {
		t.Errorf("%d files, want 7: %v", len(files), keys(files))
	}
	for _, c := range charts {
		slug := views.ChartSlug(c.ID)
		got, ok := files[filepath.Join("window_boundary", slug+".svg")]
		if slug != "policy-cumulative" && slug != "policy-rejected" {
			if ok {
				t.Errorf("%s written though not chosen", slug)
			}
			continue
		}
		want, err := views.RenderSVG(c, views.SVGOptions{Theme: views.ThemeDark, Subtitle: chartset.PolicyCaption(p, pattern.Name, info)})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s.svg differs from the server's rendering", slug)
		}
		page := string(files[filepath.Join("window_boundary", slug+".html")])
		if !strings.Contains(page, string(want)) || strings.Contains(page, "<script") {
			t.Errorf("%s.html does not inline the SVG, or has a script", slug)
		}
	}
	if !strings.Contains(string(files["index.md"]), "](window_boundary/policy-cumulative.svg)") {
		t.Errorf("index.md does not link the images:\n%s", files["index.md"])
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestDocsProgress: many charts report progress, at most about ten lines
// in a log and one line rewritten in place on a terminal; few are quiet.
func TestDocsProgress(t *testing.T) {
	// Every pattern's every policy chart, by default.
	all := fmt.Sprintf("rendering %d/%d", len(algorithms.Patterns)*len(views.PolicyChartSlugs), len(algorithms.Patterns)*len(views.PolicyChartSlugs))
	_, log := runDocs(t, false, "-o", t.TempDir(), tiered)
	if n := strings.Count(log, "rendering "); n < 5 || n > 11 || !strings.Contains(log, all) {
		t.Errorf("log progress: %d lines, want the last %q:\n%s", n, all, log)
	}
	_, term := runDocs(t, true, "-o", t.TempDir(), tiered)
	if !strings.Contains(term, "\r"+all) || strings.Count(term, "\n") != 2 {
		t.Errorf("terminal progress %q, want lines rewritten with \\r and one newline after them", term)
	}
	_, quiet := runDocs(t, false, "-o", t.TempDir(), "-patterns", "steady", "-charts", "policy-admitted", tiered)
	if strings.Contains(quiet, "rendering") {
		t.Errorf("one chart reported progress: %q", quiet)
	}
}

func TestDocsUsage(t *testing.T) {
	tests := []struct {
		args []string
		msg  string
	}{
		{[]string{tiered}, "give -o DIR"},
		{[]string{"-o", t.TempDir(), "-patterns", "zigzag", tiered}, `no pattern "zigzag"`},
		{[]string{"-o", t.TempDir(), "-charts", "pie", tiered}, `no chart "pie"`},
		{[]string{"-o", t.TempDir(), "-theme", "neon", tiered}, "-theme"},
		{[]string{"-o", t.TempDir(), "/nonexistent.yaml"}, "no such file"},
	}
	for _, tt := range tests {
		code, errOut := runDocs(t, false, tt.args...)
		if code != exitInvalid || !strings.Contains(errOut, tt.msg) {
			t.Errorf("%v: exit %d, %q; want 2 mentioning %q", tt.args, code, errOut, tt.msg)
		}
	}
}

// TestDocsChartTheDocumentedLimits: the charts follow the policy's own
// limits, the ones limits.md documents, for a policy without any sizing
// too: every tier's limit is in the legend with its parameters, and
// limits.md states the same numbers.
func TestDocsChartTheDocumentedLimits(t *testing.T) {
	for _, file := range []string{tiered, "../../../policy/testdata/examples/public-api.yaml", "../../../policy/testdata/examples/minimal.yaml"} {
		t.Run(filepath.Base(file), func(t *testing.T) {
			dir := t.TempDir()
			if code, errOut := runDocs(t, false, "-o", dir, "-patterns", "steady", "-charts", "policy-admitted", file); code != exitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			p, err := policy.DecodeFile(file, nil)
			if err != nil {
				t.Fatal(err)
			}
			files := tree(t, dir)
			svg, md := string(files[filepath.Join("steady", "policy-admitted.svg")]), string(files["limits.md"])
			for _, l := range p.Limits() {
				if l.Scope == policy.ScopeEndpoint || l.Scope == policy.ScopeGlobal {
					continue
				}
				// The legend names each class with its limit: the
				// algorithm and every parameter.
				spec := html.EscapeString(l.Spec.String())
				if !strings.Contains(svg, spec) {
					t.Errorf("%s (%s) is not in the chart's legend", l.Field, l.Spec)
				}
				for _, n := range specNumbers(l.Spec) {
					if !strings.Contains(md, n) {
						t.Errorf("limits.md does not state %s of %s (%s)", n, l.Field, l.Spec)
					}
				}
			}
		})
	}
}

// specNumbers are the numbers of a limit as text.
func specNumbers(s algorithms.Spec) []string {
	var out []string
	for _, v := range []int64{s.Burst, s.Queue, s.Limit} {
		if v != 0 {
			out = append(out, strconv.FormatInt(v, 10))
		}
	}
	if s.Rate != 0 {
		out = append(out, strconv.FormatFloat(s.Rate, 'f', -1, 64))
	}
	return out
}

// TestDocsEscapeHTML: a policy name holding HTML and Markdown syntax is
// text in every file a docs site renders (index.md escaped, limits.md
// only inside its comment, the HTML pages and SVGs as text, never as an
// element or an event attribute); a tier name holding HTML is refused
// before any file is written.
func TestDocsEscapeHTML(t *testing.T) {
	const name = `<img src=x onerror=alert(1)> --->*b* [l](javascript:alert(1))`
	write := func(t *testing.T, edit func(*policy.Policy)) string {
		t.Helper()
		p, err := policy.DecodeFile(tiered, nil)
		if err != nil {
			t.Fatal(err)
		}
		edit(&p)
		var buf bytes.Buffer
		if err := policy.Encode(&buf, p); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(t.TempDir(), "policy.yaml")
		if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return file
	}

	t.Run("name", func(t *testing.T) {
		dir := t.TempDir()
		file := write(t, func(p *policy.Policy) { p.Metadata.Name = name })
		if code, errOut := runDocs(t, false, "-o", dir, "-patterns", "steady", "-charts", "policy-admitted", file); code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		files := tree(t, dir)
		index := string(files["index.md"])
		if strings.ContainsAny(index, "<>") || !strings.Contains(index, `&lt;img src=x onerror=alert(1)&gt; ---&gt;\*b\* \[l\](javascript:alert(1))`) {
			t.Errorf("index.md does not escape the name:\n%s", index)
		}
		comment, rest, _ := strings.Cut(string(files["limits.md"]), "\n")
		if inner := strings.TrimSuffix(strings.TrimPrefix(comment, "<!--"), "-->"); strings.Contains(inner, "--") || !strings.HasPrefix(comment, "<!--") {
			t.Errorf("limits.md's comment can end early: %s", comment)
		}
		if strings.Contains(rest, "<img") {
			t.Errorf("limits.md has the name's HTML outside its comment")
		}
		for rel, data := range files {
			switch filepath.Ext(rel) {
			case ".html":
				doc, err := goquery.NewDocumentFromReader(bytes.NewReader(data))
				if err != nil {
					t.Fatal(err)
				}
				if n := doc.Find("img, script, [onerror]").Length(); n > 0 {
					t.Errorf("%s: %d elements from the name", rel, n)
				}
				if !strings.Contains(doc.Text(), "<img src=x onerror=alert(1)>") {
					t.Errorf("%s does not show the name as text", rel)
				}
			case ".svg":
				d := xml.NewDecoder(bytes.NewReader(data))
				for {
					tok, err := d.Token()
					if err == io.EOF {
						break
					} else if err != nil {
						t.Fatalf("%s: %v", rel, err)
					}
					if se, ok := tok.(xml.StartElement); ok {
						if se.Name.Local == "img" || se.Name.Local == "script" {
							t.Errorf("%s: a <%s> element", rel, se.Name.Local)
						}
						for _, a := range se.Attr {
							if strings.HasPrefix(a.Name.Local, "on") {
								t.Errorf("%s: an %s attribute", rel, a.Name.Local)
							}
						}
					}
				}
			}
		}
	})

	t.Run("tier", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "out")
		file := write(t, func(p *policy.Policy) { p.Tiers[0].Name = "<img src=x onerror=alert(1)>" })
		code, errOut := runDocs(t, false, "-o", dir, file)
		if code != exitInvalid || !strings.Contains(errOut, "tiers[0].name") {
			t.Errorf("exit %d, %q: want %d naming tiers[0].name", code, errOut, exitInvalid)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("files were written: %v", err)
		}
	})
}
