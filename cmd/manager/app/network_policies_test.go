package app

import "testing"

// The manager keeps its pods' NetworkPolicies only when asked to and in a
// pod: a process on a host (make run, the suites) has no pod to protect.
func TestKeepsNetworkPolicies(t *testing.T) {
	tests := []struct {
		name string
		o    options
		want bool
	}{
		{"in a pod", options{networkPolicies: true, podNamespace: "ops", podName: "m-1"}, true},
		{"turned off", options{networkPolicies: false, podNamespace: "ops", podName: "m-1"}, false},
		{"on a host", options{networkPolicies: true}, false},
	}
	for _, tt := range tests {
		if got := tt.o.keepsNetworkPolicies(); got != tt.want {
			t.Errorf("%s: keepsNetworkPolicies = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// The metrics policy admits the port the metrics server listens on, or
// none when it is off.
func TestListenPort(t *testing.T) {
	tests := []struct {
		addr    string
		want    int32
		wantErr bool
	}{
		{"0", 0, false},
		{":8443", 8443, false},
		{"127.0.0.1:9090", 9090, false},
		{"[::]:8080", 8080, false},
		{"8443", 0, true},
		{":http", 0, true},
		{":70000", 0, true},
	}
	for _, tt := range tests {
		got, err := listenPort(tt.addr)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("listenPort(%q) = %d, %v; want %d, error %v", tt.addr, got, err, tt.want, tt.wantErr)
		}
	}
}
