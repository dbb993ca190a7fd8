package strictjson

import (
	"testing"
)

func TestJSONPathFormat(t *testing.T) {
	got := FormatPath([]Segment{{Key: "a", IsKey: true}, {Index: 3}, {Key: "odd key", IsKey: true}, {Key: "x_1", IsKey: true}, {Key: "1x", IsKey: true}})
	if want := `$.a[3]["odd key"].x_1["1x"]`; got != want {
		t.Errorf("formatPath = %s, want %s", got, want)
	}
}
