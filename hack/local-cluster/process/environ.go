package process

import (
	"fmt"
	"os"
	"strings"
)

// ReadEnviron reads the environment of the process pid as the kernel holds
// it, which is how a test sees what a kubelet or OLM really gave a
// container, whatever its pod spec says.
func ReadEnviron(pid int) (map[string]string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return nil, err
	}
	env := map[string]string{}
	for _, kv := range strings.Split(string(data), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return env, nil
}
