package artifact

import "testing"

func BenchmarkDecodeTestReport(b *testing.B) {
	data := []byte(validTestReport)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeTestReport(TestReportFile, data); err != nil {
			b.Fatal(err)
		}
	}
}
