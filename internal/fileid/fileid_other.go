//go:build !linux

package fileid

import (
	"errors"
	"os"
)

// Supported is false off Linux: no identity is given there, so the caches
// that use this package read everything again.
const Supported = false

// errUnsupported is every stat's error off Linux.
var errUnsupported = errors.New("fileid: file identities are read on Linux only")

func Fstat(*os.File) (ID, error)           { return ID{}, errUnsupported }
func Lstat(string) (ID, error)             { return ID{}, errUnsupported }
func LstatAt(*os.File, string) (ID, error) { return ID{}, errUnsupported }

func (ID) IsDir() bool     { return false }
func (ID) IsRegular() bool { return false }
