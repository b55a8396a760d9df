package client

import (
	"fmt"
	"os"
	"strings"
)

// Token picks a credential for a command line: value (a --token flag: visible to
// every local user in ps), else the content of the file named by file, else the
// environment variable env, else the content of the file that env+"_FILE" names.
// A file's trailing newline does not count; a file that holds nothing is an error.
// It returns "" when none is given.
func Token(value, file, env string) (string, error) {
	if value != "" {
		return value, nil
	}
	if file == "" {
		if v := os.Getenv(env); v != "" {
			return v, nil
		}
		file = os.Getenv(env + "_FILE")
	}
	if file == "" {
		return "", nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	t := strings.TrimRight(string(b), "\r\n")
	if t == "" || strings.ContainsAny(t, "\r\n") {
		return "", fmt.Errorf("token file %s: want one line holding the token", file)
	}
	return t, nil
}
