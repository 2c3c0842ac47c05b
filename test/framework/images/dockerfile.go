package images

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
)

// Stage is what a stage of a Dockerfile says about the image it makes: the
// parts the images of this package copy, so that the image the tests run
// is the image `make docker-build` would make.
type Stage struct {
	// Name is what the stage is called with FROM ... AS; empty if nothing.
	Name         string
	From         string
	User         string
	Entrypoint   []string
	WorkingDir   string
	Labels       map[string]string
	ExposedPorts []string
	// Copies are the COPY instructions' "source destination" pairs.
	Copies [][2]string
}

// ParseDockerfile reads the final stage of the Dockerfile at path, the
// image a plain `docker build` makes. It knows the instructions a runtime
// stage of this project uses and refuses any other, so that a new
// instruction cannot be silently left out of the test image.
func ParseDockerfile(path string) (Stage, error) {
	return ParseDockerfileStage(path, "")
}

// ParseDockerfileStage reads the stage called name (`FROM ... AS name`,
// what `docker build --target name` makes) of the Dockerfile at path, or
// the final stage when name is empty, as ParseDockerfile does.
func ParseDockerfileStage(path, name string) (Stage, error) {
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
	// Every stage is parsed; only the one returned must hold nothing but
	// what the image builder copies.
	var stages []Stage
	var unknown [][]string
	for _, line := range lines {
		instr, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
		instr, rest = strings.ToUpper(instr), strings.TrimSpace(rest)
		if instr == "FROM" {
			// FROM [--platform=...] image [AS name]
			var f []string
			for _, w := range strings.Fields(rest) {
				if !strings.HasPrefix(w, "--") {
					f = append(f, w)
				}
			}
			if len(f) == 0 {
				return Stage{}, fmt.Errorf("%s: FROM without an image", path)
			}
			st := Stage{From: f[0], Labels: map[string]string{}}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				st.Name = f[2]
			}
			stages, unknown = append(stages, st), append(unknown, nil)
			continue
		}
		if instr == "" {
			continue // a blank line
		}
		if len(stages) == 0 {
			if instr == "ARG" {
				continue // an argument for FROM lines
			}
			return Stage{}, fmt.Errorf("%s: no FROM before %s", path, instr)
		}
		known, err := stages[len(stages)-1].apply(instr, rest)
		if err != nil {
			return Stage{}, fmt.Errorf("%s: %w", path, err)
		}
		if !known {
			unknown[len(unknown)-1] = append(unknown[len(unknown)-1], instr)
		}
	}
	if len(stages) == 0 {
		return Stage{}, fmt.Errorf("%s: no FROM", path)
	}
	i := len(stages) - 1
	if name != "" {
		i = slices.IndexFunc(stages, func(s Stage) bool { return s.Name == name })
		if i < 0 {
			return Stage{}, fmt.Errorf("%s: no stage %q", path, name)
		}
	}
	if len(unknown[i]) > 0 {
		return Stage{}, fmt.Errorf("%s: the stage %s holds %s, which package images does not copy into its image",
			path, stageName(stages[i], i == len(stages)-1), strings.Join(unknown[i], ", "))
	}
	return stages[i], nil
}

// apply records in s what instruction instr with arguments rest says about
// the image; known is false for an instruction this package does not copy
// into an image.
func (s *Stage) apply(instr, rest string) (known bool, err error) {
	switch instr {
	case "USER":
		s.User = rest
	case "WORKDIR":
		s.WorkingDir = rest
	case "ENTRYPOINT":
		if err := json.Unmarshal([]byte(rest), &s.Entrypoint); err != nil {
			return true, fmt.Errorf("ENTRYPOINT must be the exec (JSON) form: %w", err)
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
			return true, fmt.Errorf("LABEL %s: want key=value pairs, values bare or double-quoted", rest)
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
			return true, fmt.Errorf("COPY %s: want one source and one destination", rest)
		}
		s.Copies = append(s.Copies, [2]string{args[0], args[1]})
	case "ARG":
		// Build arguments change how the binary is built, not the
		// image's configuration.
	default:
		return false, nil
	}
	return true, nil
}

// stageName names a stage in an error.
func stageName(s Stage, final bool) string {
	switch {
	case s.Name != "" && final:
		return fmt.Sprintf("%q (the final one)", s.Name)
	case s.Name != "":
		return fmt.Sprintf("%q", s.Name)
	}
	return "FROM " + s.From + " (the final one)"
}

var (
	// continuation is a backslash that ends a line, which joins it to the next.
	continuation = regexp.MustCompile(`\\[ \t]*\r?\n`)
	// labelPair is one key=value of LABEL, the value bare or double-quoted
	// with \" inside; an unterminated quote matches nothing, so is refused.
	labelPair = regexp.MustCompile(`([^\s="]+)=("(?:[^"\\]|\\.)*"|[^\s"]*)`)
)
