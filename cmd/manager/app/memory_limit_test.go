package app

import (
	"testing"
)

func TestGoMemoryLimit(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    int64
		wantOK  bool
		wantErr bool
	}{
		{name: "no container limit (make run)", env: map[string]string{}},
		{name: "the manifest's 256Mi", env: map[string]string{"MEMORY_LIMIT": "268435456"}, want: 214748364, wantOK: true},
		{name: "GOMEMLIMIT set wins", env: map[string]string{"MEMORY_LIMIT": "268435456", "GOMEMLIMIT": "100MiB"}},
		{name: "a quantity, not bytes", env: map[string]string{"MEMORY_LIMIT": "256Mi"}, wantErr: true},
		{name: "zero", env: map[string]string{"MEMORY_LIMIT": "0"}, wantErr: true},
		{name: "negative", env: map[string]string{"MEMORY_LIMIT": "-1"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := goMemoryLimit(func(k string) string { return tt.env[k] })
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v, want an error: %v", err, tt.wantErr)
			}
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("got %d, %v; want %d, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestGoGCPercent(t *testing.T) {
	tests := []struct {
		name   string
		env    map[string]string
		want   int
		wantOK bool
	}{
		{name: "GOGC unset", env: map[string]string{}, want: 50, wantOK: true},
		{name: "GOGC set wins", env: map[string]string{"GOGC": "100"}},
		{name: "GOGC=off wins", env: map[string]string{"GOGC": "off"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := goGCPercent(func(k string) string { return tt.env[k] })
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("got %d, %v; want %d, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}
