package server

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"testing"
)

// FuzzMeasureUpload sends the measure form with any field values and any
// log: the server answers 200, 413 or 422 (or 400 for a broken body),
// never a 500, and the same upload gets the same answer twice.
func FuzzMeasureUpload(f *testing.F) {
	f.Add("combined", "ip", "1", ",", "", measureDesign, measureLog())
	f.Add("json", "field:user", "1", ",", "k1,paid\nk2,free", measureDesign, `{"time":"2026-11-30T10:00:00Z","user":"a","method":"GET","path":"/x"}`+"\n")
	f.Add("csv", "header:X-API-Key", "2", ";", "key,tier", "capacity=-1", "time;remote_addr;method;path\n1700000000;1.2.3.4;GET;/a\n")
	srv := newServer(config{logLimit: 1 << 20})
	f.Fuzz(func(t *testing.T, format, key, extra, comma, tiers, design, log string) {
		send := func() (int, []byte) {
			var body bytes.Buffer
			w := multipart.NewWriter(&body)
			for _, kv := range [][2]string{{"design", design}, {"format", format}, {"key", key}, {"extra", extra}, {"comma", comma}, {"tiers", tiers}} {
				w.WriteField(kv[0], kv[1])
			}
			fw, _ := w.CreateFormFile("log", "access.log")
			fw.Write([]byte(log))
			w.Close()
			req := httptest.NewRequest(http.MethodPost, measurePath, &body)
			req.Header.Set("Content-Type", w.FormDataContentType())
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, req)
			return rec.Code, rec.Body.Bytes()
		}
		code, body := send()
		switch code {
		case http.StatusOK, http.StatusUnprocessableEntity, http.StatusRequestEntityTooLarge, http.StatusBadRequest:
		default:
			t.Fatalf("status %d: %.300s", code, body)
		}
		if code2, body2 := send(); code2 != code || !bytes.Equal(body, body2) {
			t.Fatalf("the same upload answered %d then %d", code, code2)
		}
	})
}
