package prefix

import "errors"

var inTest = errors.New("orch: tests may say it")
