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
	tests := []struct {
		name string
		s    operand.Settings
		want []string
	}{
		{"the defaults: memcached's own, left out but for the memory", operand.DefaultSettings(),
			[]string{"memcached", "--port=11211", "--memory-limit=64", "--extended=modern", "--verbose"}},
		{"memory", with(func(s *operand.Settings) { s.MemoryMiB = 1024 }),
			[]string{"memcached", "--port=11211", "--memory-limit=1024", "--extended=modern", "--verbose"}},
		{"item size", with(func(s *operand.Settings) { s.MaxItemSize = 4 << 20 }),
			[]string{"memcached", "--port=11211", "--memory-limit=64", "--extended=modern", "--verbose", "--max-item-size=4194304"}},
		{"connections", with(func(s *operand.Settings) { s.MaxConnections = 4096 }),
			[]string{"memcached", "--port=11211", "--memory-limit=64", "--extended=modern", "--verbose", "--conn-limit=4096"}},
		{"threads", with(func(s *operand.Settings) { s.Threads = 256 }),
			[]string{"memcached", "--port=11211", "--memory-limit=64", "--extended=modern", "--verbose", "--threads=256"}},
		{"all four", operand.Settings{MemoryMiB: 256, MaxItemSize: 512 << 10, MaxConnections: 1296, Threads: 1},
			[]string{"memcached", "--port=11211", "--memory-limit=256", "--extended=modern", "--verbose",
				"--max-item-size=524288", "--conn-limit=1296", "--threads=1"}},
		{"TLS at the Intermediate profile", with(func(s *operand.Settings) {
			s.TLS = &operand.TLS{MinVersion: "VersionTLS12", Ciphers: "ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384"}
		}), []string{"memcached", "--port=11211", "--memory-limit=64", "--extended=modern", "--verbose",
			"--enable-ssl", "--listen=*,notls:127.0.0.1:11212",
			"--extended=ssl_chain_cert=/etc/memcached/tls/tls.crt,ssl_key=/etc/memcached/tls/tls.key,ssl_min_version=2," +
				"ssl_ciphers=ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384"}},
		{"TLS 1.3 with client certificates", with(func(s *operand.Settings) {
			s.TLS = &operand.TLS{MinVersion: "VersionTLS13", ClientCertificates: true}
		}), []string{"memcached", "--port=11211", "--memory-limit=64", "--extended=modern", "--verbose",
			"--enable-ssl", "--listen=*,notls:127.0.0.1:11212",
			"--extended=ssl_chain_cert=/etc/memcached/tls/tls.crt,ssl_key=/etc/memcached/tls/tls.key,ssl_min_version=3," +
				"ssl_ca_cert=/etc/memcached/tls/ca.crt,ssl_verify_mode=2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, operand.Command(tt.s)); diff != "" {
				t.Errorf("Command(%+v) (-want +got):\n%s", tt.s, diff)
			}
		})
	}
}
