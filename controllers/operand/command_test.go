package operand_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/example-inc/memcached-operator/controllers/operand"
)

// TestCommand compares whole command lines: a flag added, dropped or moved
// is a difference, and a changed command line restarts every pod.
func TestCommand(t *testing.T) {
	with := func(change func(*operand.Settings)) operand.Settings {
		s := operand.DefaultSettings()
		change(&s)
		return s
	}
	cmd := func(memory string, extra ...string) []string {
		return append([]string{"memcached", "--port=11211", "--memory-limit=" + memory, "--extended=modern", "--verbose"}, extra...)
	}
	tls := func(extended string) []string {
		return cmd("64", "--enable-ssl", "--listen=*,notls:127.0.0.1:11212",
			"--extended=ssl_chain_cert=/etc/memcached/tls/tls.crt,ssl_key=/etc/memcached/tls/tls.key,"+extended)
	}
	tests := []struct {
		name string
		s    operand.Settings
		want []string
	}{
		{"the defaults: memcached's own, left out but for the memory", operand.DefaultSettings(), cmd("64")},
		{"memory", with(func(s *operand.Settings) { s.MemoryMiB = 1024 }), cmd("1024")},
		{"item size", with(func(s *operand.Settings) { s.MaxItemSize = 4 << 20 }), cmd("64", "--max-item-size=4194304")},
		{"connections", with(func(s *operand.Settings) { s.MaxConnections = 4096 }), cmd("64", "--conn-limit=4096")},
		{"threads", with(func(s *operand.Settings) { s.Threads = 256 }), cmd("64", "--threads=256")},
		{"all four", operand.Settings{MemoryMiB: 256, MaxItemSize: 512 << 10, MaxConnections: 1296, Threads: 1},
			cmd("256", "--max-item-size=524288", "--conn-limit=1296", "--threads=1")},
		{"TLS at the Intermediate profile", with(func(s *operand.Settings) {
			s.TLS = &operand.TLS{MinVersion: "VersionTLS12", Ciphers: "ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384"}
		}), tls("ssl_min_version=2,ssl_ciphers=ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384")},
		{"TLS 1.3 with client certificates", with(func(s *operand.Settings) {
			s.TLS = &operand.TLS{MinVersion: "VersionTLS13", ClientCertificates: true}
		}), tls("ssl_min_version=3,ssl_ca_cert=/etc/memcached/tls/ca.crt,ssl_verify_mode=2")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, operand.Command(tt.s)); diff != "" {
				t.Errorf("Command(%+v) (-want +got):\n%s", tt.s, diff)
			}
		})
	}
}
