package views

import (
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0 s"},
		{time.Second, "1 s"},
		{1500 * time.Millisecond, "1.5 s"},
		{10 * time.Second, "10 s"},
		{time.Minute, "60 s"},
		{90 * time.Second, "1.5 min"},
		{100 * time.Second, "100 s"},
		{2 * time.Minute, "2 min"},
		{time.Hour, "60 min"},
		{90 * time.Minute, "1.5 h"},
		{2 * time.Hour, "2 h"},
		{24 * time.Hour, "24 h"},
		{48 * time.Hour, "2 d"},
		{366 * 24 * time.Hour, "366 d"},
		{3601 * time.Second, "3601 s"},
		{500 * time.Millisecond, "500 ms"},
		{1250 * time.Microsecond, "1.25 ms"},
		{10 * time.Millisecond, "10 ms"},
		{250 * time.Microsecond, "250 µs"},
		{7, "7 ns"},
		{-2 * time.Second, "−2 s"},
		{time.Second + time.Nanosecond, "1 s"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := Duration(tt.d); got != tt.want {
				t.Errorf("Duration(%v) = %q, want %q", tt.d, got, tt.want)
			}
		})
	}
}

func TestSecondsText(t *testing.T) {
	tests := []struct {
		s    float64
		want string
	}{
		{60, "60 s"}, {90, "1.5 min"}, {0.5, "500 ms"}, {7200, "2 h"}, {1e30, "1e+30 s"},
	}
	for _, tt := range tests {
		if got := SecondsText(tt.s); got != tt.want {
			t.Errorf("SecondsText(%v) = %q, want %q", tt.s, got, tt.want)
		}
	}
}
