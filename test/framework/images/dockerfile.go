package images

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
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
	raw, err := os.ReadFile(path)
	if err != nil {
		return Stage{}, err
	}
	// Comment lines go before continuations are joined: as for Docker, one
	// inside a continued instruction does not end it.
	var kept []string
	for line := range strings.Lines(string(raw)) {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			kept = append(kept, line)
		}
	}
	lines := strings.Split(continuation.ReplaceAllString(strings.Join(kept, ""), " "), "\n")
	// Every stage is parsed, the last one is returned; only the final
	// stage must hold nothing but what the image builder copies.
	var s Stage
	var unknown []string
	for _, line := range lines {
		instr, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
		instr, rest = strings.ToUpper(instr), strings.TrimSpace(rest)
		switch instr {
		case "": // a blank line
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
			if strings.TrimSpace(labelPair.ReplaceAllString(rest, "")) != "" {
				return Stage{}, fmt.Errorf("%s: LABEL %s: want key=value pairs, values bare or double-quoted", path, rest)
			}
			for _, kv := range labelPair.FindAllStringSubmatch(rest, -1) {
				if v, quoted := strings.CutPrefix(kv[2], `"`); quoted {
					kv[2] = strings.ReplaceAll(strings.TrimSuffix(v, `"`), `\"`, `"`)
				}
				s.Labels[kv[1]] = kv[2]
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

var (
	// continuation is a backslash that ends a line, which joins it to the next.
	continuation = regexp.MustCompile(`\\[ \t]*\r?\n`)
	// labelPair is one key=value of LABEL, the value bare or double-quoted
	// with \" inside; an unterminated quote matches nothing, so is refused.
	labelPair = regexp.MustCompile(`([^\s="]+)=("(?:[^"\\]|\\.)*"|[^\s"]*)`)
)
