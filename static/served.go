package static

import (
	"bytes"
	"embed"
	"io/fs"
	"strings"
	"sync"
	"time"
)

// served is the embedded files as the server sends them: the same files,
// except that a stylesheet loses its comments, its blank lines and its
// indentation (stripCSS). The comments are for whoever edits the source;
// a browser has no use for them, and with the indentation they were a
// third of the stylesheet's brotli bytes (4 487; 2 945 served). Written
// here rather than taken from a minifier: it is sixty lines, and a
// minifier would add two modules to the build for one file. Every
// representation of a file (identity, brotli, gzip), its size and its
// version come from the served bytes.
type served struct{ files embed.FS }

var (
	_ fs.ReadFileFS = served{}
	_ fs.ReadDirFS  = served{}
)

// stripped holds each stylesheet stripped, made on first use: the files
// never change while the binary runs.
var stripped sync.Map // name → []byte

func isCSS(name string) bool { return strings.HasSuffix(name, ".css") }

func (s served) ReadFile(name string) ([]byte, error) {
	if !isCSS(name) {
		return s.files.ReadFile(name)
	}
	if b, ok := stripped.Load(name); ok {
		return b.([]byte), nil
	}
	raw, err := s.files.ReadFile(name)
	if err != nil {
		return nil, err
	}
	b, _ := stripped.LoadOrStore(name, stripCSS(raw))
	return b.([]byte), nil
}

func (s served) ReadDir(name string) ([]fs.DirEntry, error) {
	entries, err := s.files.ReadDir(name)
	if err != nil {
		return nil, err
	}
	for i, e := range entries {
		if !e.IsDir() && isCSS(e.Name()) {
			entries[i] = fs.FileInfoToDirEntry(servedInfo{e, s, name + "/" + e.Name()})
		}
	}
	return entries, nil
}

func (s served) Open(name string) (fs.File, error) {
	f, err := s.files.Open(name)
	if err != nil || !isCSS(name) {
		return f, err
	}
	info, err := f.Stat()
	f.Close()
	if err != nil {
		return nil, err
	}
	if info.IsDir() {
		return s.files.Open(name)
	}
	b, err := s.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return &memFile{Reader: bytes.NewReader(b), info: sizedInfo{info, int64(len(b))}}, nil
}

// memFile is a served file held in memory; it seeks, as http.ServeContent
// needs.
type memFile struct {
	*bytes.Reader
	info fs.FileInfo
}

func (f *memFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *memFile) Close() error               { return nil }

// sizedInfo is an embedded file's info with the served size.
type sizedInfo struct {
	fs.FileInfo
	size int64
}

func (i sizedInfo) Size() int64 { return i.size }

// servedInfo is a directory entry's info with the served size, read when
// asked.
type servedInfo struct {
	fs.DirEntry
	s    served
	path string
}

func (i servedInfo) Size() int64 {
	b, _ := i.s.ReadFile(strings.TrimPrefix(i.path, "./"))
	return int64(len(b))
}
func (i servedInfo) Mode() fs.FileMode  { return i.Type() }
func (i servedInfo) ModTime() time.Time { return time.Time{} }
func (i servedInfo) Sys() any           { return nil }

// stripCSS returns css without its comments, with each line's leading and
// trailing blanks and its empty lines dropped. Quoted strings are copied
// as they are, a "/*" inside one included; a string continued on the next
// line (a backslash before the line break) keeps that line's blanks. An
// unterminated comment runs to the end, as CSS reads it.
func stripCSS(css []byte) []byte {
	out := make([]byte, 0, len(css))
	var quote byte    // the open string's quote, 0 outside one
	lineStart := true // nothing but blanks written on this output line
	for i := 0; i < len(css); i++ {
		c := css[i]
		switch {
		case quote != 0:
			out = append(out, c)
			if c == '\\' && i+1 < len(css) {
				i++
				out = append(out, css[i])
			} else if c == quote || c == '\n' {
				quote = 0 // an unescaped line break ends a bad string
			}
			continue
		case c == '/' && i+1 < len(css) && css[i+1] == '*':
			end := bytes.Index(css[i+2:], []byte("*/"))
			if end < 0 {
				return trimLine(out)
			}
			i += 2 + end + 1
			continue
		case c == '\n':
			out = trimLine(out)
			if !lineStart {
				out = append(out, '\n')
			}
			lineStart = true
			continue
		case lineStart && (c == ' ' || c == '\t' || c == '\r'):
			continue
		case c == '"' || c == '\'':
			quote = c
		}
		out = append(out, c)
		lineStart = false
	}
	return trimLine(out)
}

// trimLine drops the blanks at the end of out.
func trimLine(out []byte) []byte {
	for len(out) > 0 {
		switch out[len(out)-1] {
		case ' ', '\t', '\r':
			out = out[:len(out)-1]
			continue
		}
		break
	}
	return out
}
