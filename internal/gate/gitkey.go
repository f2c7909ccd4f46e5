package gate

import (
	"crypto/sha256"
	"encoding/hex"
	"unicode/utf8"

	"github.com/askd-dev/askd"
)

// The key of a git push's approval is a contract (SPEC §12): askd gate git
// asks for each update of a protected ref under GitKey, with GitKeyPrefix
// as its replaces, and the server finds the same update's ask by the key
// and cancels an older push's pending ask of the same ref by the prefix.
// A change here changes which pushes count as the same one.

// Kinds of ref update, as the payload's kind and the key say.
const (
	UpdateFastForward = "update" // old is an ancestor of new
	UpdateCreate      = "create" // old is zeros: a new ref
	UpdateDelete      = "delete" // new is zeros
	UpdateForce       = "force"  // not a fast-forward: commits leave the ref
)

// GitKey is the key of the approval for one update of ref in repository
// repo (its absolute path) from commit old to new, of kind (one of the
// Update kinds): "git push <repository> <ref> <kind> <old> <new>", at most
// askd.MaxGateKeyChars characters. A ref name holds no space, so the prefix
// up to the ref (GitKeyPrefix) names that ref alone. Where the plain form is
// too long, or the path holds characters a key may not, the repository is
// its SHA-256 (and, past that, the ref too).
func GitKey(repo, ref, kind, old, new string) string {
	return GitKeyPrefix(repo, ref, len(old)) + kind + " " + old + " " + new
}

// GitKeyPrefix is what every key of (repo, ref) starts with: the replaces
// of a newer update of the ref. idLen is the length of an object name (40
// or 64), so that every key of the ref takes the same form.
func GitKeyPrefix(repo, ref string, idLen int) string {
	const kindLen = len(UpdateFastForward) // the longest kind
	room := askd.MaxGateKeyChars - (kindLen + 2 + 2*idLen)
	plain := "git push " + repo + " " + ref + " "
	if utf8.RuneCountInString(plain) <= room && askd.Printable(repo) == repo {
		return plain
	}
	hashed := "git push sha256:" + keyDigest(repo) + " " + ref + " "
	if len(hashed) <= room {
		return hashed
	}
	return "git push sha256:" + keyDigest(repo+"\x00"+ref) + " "
}

func keyDigest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}
