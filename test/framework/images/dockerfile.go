package images

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// Stage is what the final stage of a Dockerfile says about the image it
// makes: the parts the operator image copies, so that the image the tests
// run is the image `make docker-build` would make.
type Stage struct {
	From         string
	User         string
	Entrypoint   []string
	WorkingDir   string
	Labels       map[string]string
	ExposedPorts []string
	// Copies are the COPY instructions' "source destination" pairs.
	Copies [][2]string
}

// ParseDockerfile reads the final stage of the Dockerfile at path. It knows
// the instructions a final stage of this project uses and refuses any other,
// so that a new instruction cannot be silently left out of the test image.
func ParseDockerfile(path string) (Stage, error) {
	f, err := os.Open(path)
	if err != nil {
		return Stage{}, err
	}
	defer func() { _ = f.Close() }()
	var lines []string
	var cont strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") || (line == "" && cont.Len() == 0) {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			cont.WriteString(strings.TrimSuffix(line, "\\") + " ")
			continue
		}
		cont.WriteString(line)
		lines = append(lines, cont.String())
		cont.Reset()
	}
	if err := sc.Err(); err != nil {
		return Stage{}, err
	}
	// Every stage is parsed, the last one is returned; only the final
	// stage must hold nothing but what the image builder copies.
	var s Stage
	var unknown []string
	for _, line := range lines {
		instr, rest, _ := strings.Cut(line, " ")
		instr, rest = strings.ToUpper(instr), strings.TrimSpace(rest)
		switch instr {
		case "FROM":
			s, unknown = Stage{From: strings.Fields(rest)[0], Labels: map[string]string{}}, nil
		case "USER":
			s.User = rest
		case "WORKDIR":
			s.WorkingDir = rest
		case "ENTRYPOINT":
			if err := json.Unmarshal([]byte(rest), &s.Entrypoint); err != nil {
				return Stage{}, fmt.Errorf("%s: ENTRYPOINT must be the exec (JSON) form: %w", path, err)
			}
		case "EXPOSE":
			for _, p := range strings.Fields(rest) {
				if !strings.Contains(p, "/") {
					p += "/tcp"
				}
				s.ExposedPorts = append(s.ExposedPorts, p)
			}
		case "LABEL":
			labels, err := parseLabels(rest)
			if err != nil {
				return Stage{}, fmt.Errorf("%s: LABEL %s: %w", path, rest, err)
			}
			for k, v := range labels {
				s.Labels[k] = v
			}
		case "COPY":
			var args []string
			for _, f := range strings.Fields(rest) {
				if !strings.HasPrefix(f, "--") {
					args = append(args, f)
				}
			}
			if len(args) != 2 {
				return Stage{}, fmt.Errorf("%s: COPY %s: want one source and one destination", path, rest)
			}
			s.Copies = append(s.Copies, [2]string{args[0], args[1]})
		case "ARG":
			// Build arguments change how the binary is built, not the
			// image's configuration.
		default:
			unknown = append(unknown, instr)
		}
	}
	if s.From == "" {
		return Stage{}, fmt.Errorf("%s: no FROM", path)
	}
	if len(unknown) > 0 {
		return Stage{}, fmt.Errorf("%s: the final stage holds %s, which package images does not copy into its image",
			path, strings.Join(unknown, ", "))
	}
	return s, nil
}

// parseLabels reads LABEL's key=value pairs; values may be double-quoted.
func parseLabels(s string) (map[string]string, error) {
	out := map[string]string{}
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		key, rest, ok := strings.Cut(s, "=")
		if !ok || key == "" || strings.ContainsAny(key, " \t") {
			return nil, fmt.Errorf("want key=value at %q", s)
		}
		var value string
		if strings.HasPrefix(rest, `"`) {
			end := 1
			for ; end < len(rest) && (rest[end] != '"' || rest[end-1] == '\\'); end++ {
			}
			if end == len(rest) {
				return nil, fmt.Errorf("unterminated quote at %q", rest)
			}
			value, rest = strings.ReplaceAll(rest[1:end], `\"`, `"`), rest[end+1:]
		} else {
			value, rest, _ = strings.Cut(rest, " ")
		}
		out[key] = value
		s = rest
	}
	return out, nil
}
