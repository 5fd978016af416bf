package policy

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Where a value may come from (Source.Store). The agent never chooses it.
const (
	StoreKeyring   = "keyring"   // the OS keyring (`fillgate remember`)
	StorePass      = "pass"      // password-store: `pass show`
	StoreKeePassXC = "keepassxc" // `keepassxc-cli show`
	StoreOnePass   = "op"        // 1Password CLI: `op read`, `op item get --otp`
	StoreBitwarden = "bw"        // Bitwarden CLI: `bw get password|totp`
	StoreRbw       = "rbw"       // rbw, the unofficial Bitwarden client: `rbw get|code`
)

// How keepassxc-cli gets the database password (Source.DBPassword).
const (
	DBPasswordPrompt = "prompt" // the person types it in fillgate's prompt; it goes to keepassxc-cli on stdin
	DBPasswordNone   = "none"   // the database opens with its key file alone (--no-password)
)

// Source says where the value for one field kind of a service comes from:
// a store and the store's parameters, all fixed by the person's policy.
// Which parameters a store takes, and which it needs, is in the policy
// file's documentation (`fillgate policy example`).
type Source struct {
	// Store is StoreKeyring, StorePass, StoreKeePassXC, StoreOnePass,
	// StoreBitwarden or StoreRbw.
	Store string
	// Entry is the pass entry (work/github), the KeePassXC entry path
	// (work/github) or the rbw entry name.
	Entry string
	// StoreDir is pass's store directory (PASSWORD_STORE_DIR); "" means
	// pass's own default.
	StoreDir string
	// Database and KeyFile are the KeePassXC database and its optional key
	// file (absolute paths).
	Database string
	KeyFile  string
	// DBPassword is how keepassxc-cli gets the database password:
	// DBPasswordPrompt (also for "") or DBPasswordNone.
	DBPassword string
	// Ref is the 1Password secret reference for a password
	// (op://vault/item/field).
	Ref string
	// Item is the Bitwarden item id, or the 1Password item of a one-time
	// code.
	Item string
	// Vault is the 1Password vault of Item; Account the 1Password account.
	Vault   string
	Account string
	// User and Folder pick among rbw entries of the same name.
	User   string
	Folder string
	// Command is the store's executable (absolute path); "" means the
	// store's usual name looked up on PATH.
	Command string
}

// Keys of a source table.
const (
	keySource     = "source"
	keyEntry      = "entry"
	keyStoreDir   = "store_dir"
	keyDatabase   = "database"
	keyKeyFile    = "key_file"
	keyDBPassword = "db_password"
	keyRef        = "ref"
	keyItem       = "item"
	keyVault      = "vault"
	keyAccount    = "account"
	keyUser       = "user"
	keyFolder     = "folder"
	keyCommand    = "command"
)

// sourceKeys lists a source table's keys in the order Format writes them.
func sourceKeys() []string {
	return []string{keySource, keyEntry, keyStoreDir, keyDatabase, keyKeyFile, keyDBPassword, keyRef, keyItem, keyVault, keyAccount, keyUser, keyFolder, keyCommand}
}

// stores lists the stores in the order messages name them.
func stores() []string {
	return []string{StoreKeyring, StorePass, StoreKeePassXC, StoreOnePass, StoreBitwarden, StoreRbw}
}

// storeParams is which parameters a store takes for a field kind: the
// ones it needs first, then the optional ones.
type storeParams struct{ need, may []string }

// paramsOf returns the parameters of store for the field kind named by
// fieldKey (keyPassword or keyOTP).
func paramsOf(store, fieldKey string) storeParams {
	otp := fieldKey == keyOTP
	switch store {
	case StoreKeyring:
		return storeParams{}
	case StorePass:
		return storeParams{need: []string{keyEntry}, may: []string{keyStoreDir, keyCommand}}
	case StoreKeePassXC:
		return storeParams{need: []string{keyDatabase, keyEntry}, may: []string{keyKeyFile, keyDBPassword, keyCommand}}
	case StoreOnePass:
		if otp {
			return storeParams{need: []string{keyItem}, may: []string{keyVault, keyAccount, keyCommand}}
		}
		return storeParams{need: []string{keyRef}, may: []string{keyAccount, keyCommand}}
	case StoreBitwarden:
		return storeParams{need: []string{keyItem}, may: []string{keyCommand}}
	case StoreRbw:
		return storeParams{need: []string{keyEntry}, may: []string{keyUser, keyFolder, keyCommand}}
	}
	return storeParams{}
}

// get returns the value of a source key.
func (s *Source) get(key string) string {
	switch key {
	case keySource:
		return s.Store
	case keyEntry:
		return s.Entry
	case keyStoreDir:
		return s.StoreDir
	case keyDatabase:
		return s.Database
	case keyKeyFile:
		return s.KeyFile
	case keyDBPassword:
		return s.DBPassword
	case keyRef:
		return s.Ref
	case keyItem:
		return s.Item
	case keyVault:
		return s.Vault
	case keyAccount:
		return s.Account
	case keyUser:
		return s.User
	case keyFolder:
		return s.Folder
	case keyCommand:
		return s.Command
	}
	return ""
}

// set sets a source key.
func (s *Source) set(key, v string) {
	switch key {
	case keySource:
		s.Store = v
	case keyEntry:
		s.Entry = v
	case keyStoreDir:
		s.StoreDir = v
	case keyDatabase:
		s.Database = v
	case keyKeyFile:
		s.KeyFile = v
	case keyDBPassword:
		s.DBPassword = v
	case keyRef:
		s.Ref = v
	case keyItem:
		s.Item = v
	case keyVault:
		s.Vault = v
	case keyAccount:
		s.Account = v
	case keyUser:
		s.User = v
	case keyFolder:
		s.Folder = v
	case keyCommand:
		s.Command = v
	}
}

// dbPassword is DBPassword with its default.
func (s *Source) dbPassword() string {
	if s.DBPassword == "" {
		return DBPasswordPrompt
	}
	return s.DBPassword
}

// problems returns the problems of a source for the field kind named by
// fieldKey, each with the source key it is about. With values, it also
// checks that every value is valid and in normal form.
func (s *Source) problems(fieldKey string, values bool) []keyProblem {
	var kps []keyProblem
	add := func(key string, err error) {
		if err != nil {
			kps = append(kps, keyProblem{path: []string{key}, index: -1, err: err})
		}
	}
	if !slices.Contains(stores(), s.Store) {
		add(keySource, fmt.Errorf("%s is not a store; use %s", quote(s.Store), strings.Join(stores(), ", ")))
		return kps
	}
	ps := paramsOf(s.Store, fieldKey)
	for _, key := range sourceKeys()[1:] {
		v := s.get(key)
		need, may := slices.Contains(ps.need, key), slices.Contains(ps.may, key)
		switch {
		case v == "" && need:
			add(keySource, fmt.Errorf("source = %s needs %s (%s)", tomlString(s.Store), key, paramHelp(s.Store, fieldKey, key)))
		case v != "" && !need && !may:
			add(key, fmt.Errorf("source = %s does not take %s; it takes %s", tomlString(s.Store), key, paramList(ps)))
		case v != "" && values:
			add(key, canonical(paramNormalizer(s.Store, key))(v))
		}
	}
	if s.Store == StoreKeePassXC && s.dbPassword() == DBPasswordNone && s.KeyFile == "" {
		add(keyDBPassword, fmt.Errorf("db_password = %s opens the database with its key file alone; set key_file too", tomlString(DBPasswordNone)))
	}
	return kps
}

// paramList names a store's parameters for a message.
func paramList(ps storeParams) string {
	all := append(append([]string(nil), ps.need...), ps.may...)
	if len(all) == 0 {
		return "no other keys"
	}
	return strings.Join(all, ", ")
}

// paramHelp says what a needed parameter holds.
func paramHelp(store, fieldKey, key string) string {
	switch {
	case key == keyEntry && store == StorePass && fieldKey == keyOTP:
		return `the pass entry that holds an otpauth:// line, like "work/github"`
	case key == keyEntry && store == StorePass:
		return `the pass entry, like "work/github"`
	case key == keyEntry && store == StoreKeePassXC:
		return `the entry's path in the database, like "work/github"`
	case key == keyEntry:
		return `the rbw entry name, like "github"`
	case key == keyDatabase:
		return `the database file, an absolute path like "/home/alice/passwords.kdbx"`
	case key == keyRef:
		return `a secret reference, like "op://Private/GitHub/password"`
	case key == keyItem && store == StoreOnePass:
		return `the 1Password item, like "GitHub"`
	case key == keyItem:
		return `the Bitwarden item id, as "bw list items" shows it`
	}
	return "see fillgate policy example"
}

// paramNormalizer returns the check for a parameter's value.
func paramNormalizer(store, key string) func(string) (string, error) {
	switch key {
	case keyStoreDir, keyDatabase, keyKeyFile, keyCommand:
		return normalizeAbsPath
	case keyDBPassword:
		return func(s string) (string, error) { return s, oneOf(s, DBPasswordPrompt, DBPasswordNone) }
	case keyRef:
		return normalizeOPRef
	case keyEntry:
		if store == StorePass {
			return normalizePassEntry
		}
	}
	return normalizeName
}

// normalizeAbsPath checks an absolute, clean file path.
func normalizeAbsPath(s string) (string, error) {
	if err := plainText(s); err != nil {
		return "", err
	}
	if !filepath.IsAbs(s) {
		return "", fmt.Errorf("%s is not an absolute path", quote(s))
	}
	return filepath.Clean(s), nil
}

// normalizeName checks a store's name for an entry, item, vault, account,
// user or folder: plain text that cannot be read as an option.
func normalizeName(s string) (string, error) {
	if err := plainText(s); err != nil {
		return "", err
	}
	if strings.HasPrefix(s, "-") {
		return "", fmt.Errorf("%s starts with -, which the store would read as an option", quote(s))
	}
	return s, nil
}

// normalizePassEntry checks a pass entry: a relative path inside the store.
func normalizePassEntry(s string) (string, error) {
	n, err := normalizeName(s)
	if err != nil {
		return "", err
	}
	for _, part := range strings.Split(n, "/") {
		if part == "" || part == "." || part == ".." {
			return "", fmt.Errorf("%s is not a pass entry; write a path inside the store like \"work/github\"", quote(s))
		}
	}
	return n, nil
}

// normalizeOPRef checks a 1Password secret reference.
func normalizeOPRef(s string) (string, error) {
	if err := plainText(s); err != nil {
		return "", err
	}
	rest, ok := strings.CutPrefix(s, "op://")
	if !ok || strings.Count(rest, "/") < 2 || strings.Contains(rest, "//") {
		return "", fmt.Errorf("%s is not a secret reference; write it like \"op://Private/GitHub/password\"", quote(s))
	}
	return s, nil
}

// plainText refuses an empty value, control characters and invalid UTF-8.
func plainText(s string) error {
	switch {
	case s == "":
		return errors.New("empty")
	case len(s) > 1024:
		return errors.New("longer than 1024 bytes")
	case strings.ToValidUTF8(s, "\uFFFD") != s:
		return errors.New("not valid UTF-8 text")
	case strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f }):
		return fmt.Errorf("%s contains a control character", quote(s))
	}
	return nil
}
