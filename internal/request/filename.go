package request

import "strings"

var windowsReserved = map[string]bool{
	"CON": true, "PRN": true, "AUX": true, "NUL": true,
	"COM1": true, "COM2": true, "COM3": true, "COM4": true, "COM5": true,
	"COM6": true, "COM7": true, "COM8": true, "COM9": true,
	"LPT1": true, "LPT2": true, "LPT3": true, "LPT4": true, "LPT5": true,
	"LPT6": true, "LPT7": true, "LPT8": true, "LPT9": true,
}

// superscriptDigits maps the digits Windows also treats as device numbers.
var superscriptDigits = strings.NewReplacer("\u00b9", "1", "\u00b2", "2", "\u00b3", "3")

// SafeFileName reports whether name would pass iac-code's artifact
// file-name sanitiser unchanged: non-empty; not "." or ".."; no "/" or
// "\"; no control character below U+0020 and none of <>:"|?*; no trailing
// space or dot; and a stem (text before the first dot) that is not a
// Windows device name (CON, PRN, AUX, NUL, COM1-9, LPT1-9, any case,
// superscript 1-3 counting as digits).
func SafeFileName(name string) bool {
	if name == "" || name == "." || name == ".." {
		return false
	}
	for _, r := range name {
		if r < 0x20 || strings.ContainsRune(`<>:"/\|?*`, r) {
			return false
		}
	}
	if strings.HasSuffix(name, " ") || strings.HasSuffix(name, ".") {
		return false
	}
	stem, _, _ := strings.Cut(name, ".")
	return !windowsReserved[superscriptDigits.Replace(strings.ToUpper(stem))]
}
