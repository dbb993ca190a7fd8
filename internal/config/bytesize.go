package config

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Bounds of [test] limits: fewer processes than MinProcesses cannot even
// start a shell pipeline, less memory than MinMemory not a compiler.
const (
	MinProcesses          = 8
	MaxProcesses          = 4 << 20 // the kernel's largest pid_max
	MinMemory    ByteSize = 16 << 20
)

// ByteSize is a number of bytes, written in TOML as a string with a unit
// ("512MiB", "4GiB", "2GB") or as an integer of bytes.
type ByteSize int64

// byteUnits are the accepted units, binary and decimal.
var byteUnits = map[string]int64{
	"B":   1,
	"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
	"KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
}

// ParseByteSize parses "<digits><unit>" (an optional space between, unit
// B, KiB, MiB, GiB, TiB, KB, MB, GB or TB, exactly so).
func ParseByteSize(s string) (ByteSize, error) {
	bad := func() (ByteSize, error) {
		return 0, fmt.Errorf(`expected a size like "512MiB" or "4GiB" (units B, KiB, MiB, GiB, TiB, KB, MB, GB, TB), got %q`, s)
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 || i > 18 {
		return bad()
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil {
		return bad()
	}
	unit, ok := byteUnits[strings.TrimPrefix(s[i:], " ")]
	if !ok {
		return bad()
	}
	if n > math.MaxInt64/unit {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return ByteSize(n * unit), nil
}

// UnmarshalTOML accepts a size string or a non-negative integer of bytes.
func (b *ByteSize) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case string:
		n, err := ParseByteSize(x)
		if err != nil {
			return err
		}
		*b = n
	case int64:
		if x < 0 {
			return errors.New("expected a non-negative number of bytes")
		}
		*b = ByteSize(x)
	default:
		return fmt.Errorf(`expected a size like "4GiB" or a number of bytes, got %T`, v)
	}
	return nil
}

// String renders the size in the largest binary unit that divides it.
func (b ByteSize) String() string {
	for _, u := range []string{"TiB", "GiB", "MiB", "KiB"} {
		if size := byteUnits[u]; int64(b) >= size && int64(b)%size == 0 {
			return strconv.FormatInt(int64(b)/size, 10) + u
		}
	}
	return strconv.FormatInt(int64(b), 10) + "B"
}
