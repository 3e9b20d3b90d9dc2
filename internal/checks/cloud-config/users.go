package cloudconfig

import (
	"fmt"
	"path"
	"strings"

	"github.com/guestcheck/guestcheck/internal/parse/authkeys"
	cc "github.com/guestcheck/guestcheck/internal/parse/cloudconfig"
	"github.com/guestcheck/guestcheck/internal/parse/passwd"
	"github.com/guestcheck/guestcheck/internal/parse/sudoers"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// accountsReadFix is the fix for account databases that could not be
// read, by the first that failed: a root-only file (/etc/shadow) asks for
// root only when guestcheck is not root already.
func (j *judge) accountsReadFix() string {
	f := j.f
	if f.AccountsReadErr == nil {
		return codeUnreadable.CaseFix("when the account databases have bad lines")
	}
	return readFix(f.IsRoot, f.AccountsReadFile, f.AccountsReadErr)
}

// liveOr is the fix of the case named running on the running system, else
// the one named image: under an image root a command such as usermod
// would change the host's own accounts, so the fix edits the image.
func (j *judge) liveOr(c runner.Code, running, image string, kv ...string) string {
	if j.f.Live {
		return c.CaseFix(running, kv...)
	}
	return c.CaseFix(image, kv...)
}

// userKeys are the keys the users entry asks to be in the user's
// authorized_keys: the entry's own, plus the top-level ones for the
// default user.
func (j *judge) userKeys(u cc.User) []string {
	var out []string
	switch k := u.Config["ssh_authorized_keys"].(type) {
	case string:
		out = append(out, k)
	case []any:
		for _, e := range k {
			out = append(out, cc.PyStr(e))
		}
	case map[string]any:
		for _, kk := range sortedKeys(k) {
			out = append(out, cc.PyStr(k[kk]))
		}
	}
	return out
}

func (j *judge) users() {
	f := j.f
	_, hasUsers := f.UserData.Value["users"]
	_, hasUser := f.UserData.Value["user"]
	_, hasTop := f.UserData.Value["ssh_authorized_keys"]
	for _, p := range f.UserProblems {
		j.add(runner.Fail, codeUsersInvalid, "users", "cloud-init cannot use part of users/groups: "+p, "", "",
			codeUsersInvalid.Fixf())
	}
	if !hasUsers && !hasUser && !hasTop && len(f.Users) == 0 {
		return
	}
	if len(f.AccountsErr) > 0 && len(f.Accounts.Users) == 0 {
		j.add(runner.Error, codeUnreadable, "users", "the account databases could not be read: "+strings.Join(f.AccountsErr, "; "), "", "",
			j.accountsReadFix())
		return
	}
	var defName string
	for _, u := range f.Users {
		if u.Default {
			defName = u.Name
		}
	}
	for _, u := range f.Users {
		kp := u.Path
		if !hasUsers && !hasUser {
			kp = "system_info.default_user"
		}
		if _, ok := u.Config["snapuser"]; ok {
			continue
		}
		var keys []reqKey
		for i, k := range j.userKeys(u) {
			keys = append(keys, reqKey{cc.Index(cc.Join(kp, "ssh_authorized_keys"), i), k})
		}
		if u.Default && hasTop {
			for i, k := range cc.GetList(f.UserData.Value, "ssh_authorized_keys", nil) {
				keys = append(keys, reqKey{cc.Index("ssh_authorized_keys", i), k})
			}
		}
		j.user(u, kp, keys)
	}
	if hasTop {
		j.rootKeys(defName)
	}
	for _, g := range f.Groups {
		grp, ok := f.Accounts.Group(g.Name)
		if !ok {
			j.add(runner.Fail, codeGroupMissing, g.Path, fmt.Sprintf("group %s does not exist", g.Name), "group "+g.Name, "no such group in /etc/group",
				codeGroupMissing.FixOn(f.Live, "group", g.Name))
			continue
		}
		var missing []string
		for _, m := range g.Members {
			if !contains(grp.Members, m) {
				if u, ok := f.Accounts.User(m); !ok || u.GID != grp.GID {
					missing = append(missing, m)
				}
			}
		}
		if len(missing) > 0 {
			j.add(runner.Fail, codeGroupMissing, g.Path, fmt.Sprintf("group %s lacks the members %s", g.Name, strings.Join(missing, ", ")),
				"members "+strings.Join(g.Members, ","), "members "+strings.Join(grp.Members, ","),
				j.liveOr(codeGroupMissing, "when members are missing", "when members are missing in an image", "members", strings.Join(missing, ", "), "group", g.Name))
		}
	}
}

// reqKey is one requested key and the key path it came from.
type reqKey struct{ path, key string }

func (j *judge) user(u cc.User, kp string, keys []reqKey) {
	f := j.f
	c := u.Config
	pw, ok := f.Accounts.User(u.Name)
	who := "user " + u.Name
	if u.Default {
		who = "default user " + u.Name
	}
	if !ok {
		j.add(runner.Fail, codeUserMissing, kp, who+" does not exist in /etc/passwd", "user "+u.Name, "no such user",
			codeUserMissing.FixOn(f.Live))
		return
	}
	bad := 0
	if v, ok := c["shell"].(string); ok && v != "" && pw.Shell != v {
		bad++
		j.add(runner.Fail, codeUserShell, cc.Join(kp, "shell"), fmt.Sprintf("%s has shell %s, not the requested %s", who, pw.Shell, v), v, pw.Shell,
			codeUserShell.FixOn(f.Live, "shell", v, "user", u.Name))
	}
	if v, ok := c["homedir"].(string); ok && v != "" && path.Clean(pw.Home) != path.Clean(v) {
		bad++
		j.add(runner.Fail, codeUserHome, cc.Join(kp, "homedir"), fmt.Sprintf("%s has home %s, not the requested %s", who, pw.Home, v), v, pw.Home,
			codeUserHome.FixOn(f.Live, "home", v, "user", u.Name))
	}
	noHome := cc.TranslateBool(c["no_create_home"]) || cc.TranslateBool(c["system"])
	if !noHome {
		if h := f.Files[pw.Home]; !h.Exists || !h.Info.Mode.IsDir() {
			bad++
			j.add(runner.Fail, codeUserHome, kp, fmt.Sprintf("%s's home directory %s does not exist", who, pw.Home), pw.Home, "missing",
				j.liveOr(codeUserHome, "when the home directory is missing", "when the home directory is missing in an image", "user", u.Name, "home", pw.Home))
		}
	}
	groups := f.Accounts.GroupsOf(pw)
	if v, ok := c["primary_group"].(string); ok && v != "" {
		g, _ := f.Accounts.GroupByID(pw.GID)
		if g.Name != v {
			bad++
			j.add(runner.Fail, codeUserPrimaryGroup, cc.Join(kp, "primary_group"), fmt.Sprintf("%s's primary group is %s, not the requested %s", who, orStr(g.Name, fmt.Sprint(pw.GID)), v), v, orStr(g.Name, fmt.Sprint(pw.GID)),
				codeUserPrimaryGroup.FixOn(f.Live, "group", v, "user", u.Name))
		}
	}
	want := requestedGroups(c["groups"])
	var missing []string
	for _, g := range want {
		if !contains(groups, g) {
			missing = append(missing, g)
		}
	}
	if len(missing) > 0 {
		bad++
		j.add(runner.Fail, codeUserGroups, cc.Join(kp, "groups"), fmt.Sprintf("%s is not in the requested groups %s", who, strings.Join(missing, ", ")),
			strings.Join(want, ","), strings.Join(groups, ","), codeUserGroups.FixOn(f.Live, "groups", groupList(f.Live, missing), "user", u.Name))
	}
	bad += j.password(u, kp, who)
	bad += j.sudo(u, kp, who)
	nk, kbad := j.keys(u.Name, pw, kp, keys, who)
	bad += kbad
	if bad == 0 {
		parts := []string{"shell " + pw.Shell, "home " + pw.Home, "groups " + strings.Join(groups, ",")}
		if nk > 0 {
			parts = append(parts, fmt.Sprintf("%d of %d requested keys", nk, len(keys)))
		}
		j.add(runner.Pass, codeUserOK, kp, who+" exists as requested: "+strings.Join(parts, ", "), "", "", "",
			"effective_config", j.configSource())
	}
}

// configSource says where the users configuration came from.
func (j *judge) configSource() string {
	if j.f.CombinedUsed {
		return "cloud-init's own merge, " + j.f.Display(CombinedPath)
	}
	return "user-data merged over " + orStr(strings.Join(j.f.SystemFiles, ", "), "no system configuration")
}

// groupList joins group names as the fix uses them: a comma list, which
// usermod -aG takes, on the running system; words under an image root.
func groupList(live bool, gs []string) string {
	if live {
		return strings.Join(gs, ",")
	}
	return strings.Join(gs, ", ")
}

func orStr(a, b string) string {
	if a == "" {
		return b
	}
	return a
}

// requestedGroups is add_user's reading of groups: a comma string or a
// list (a dict's keys, deprecated).
func requestedGroups(v any) []string {
	var out []string
	switch x := v.(type) {
	case string:
		for _, g := range strings.Split(x, ",") {
			if g = strings.TrimSpace(g); g != "" {
				out = append(out, g)
			}
		}
	case []any:
		for _, e := range x {
			if g := strings.TrimSpace(cc.PyStr(e)); g != "" {
				out = append(out, g)
			}
		}
	case map[string]any:
		out = sortedKeys(x)
	}
	return out
}

// password judges lock_passwd and the password keys, never showing them.
func (j *judge) password(u cc.User, kp, who string) int {
	f := j.f
	c := u.Config
	sh, ok := f.Accounts.ShadowOf(u.Name)
	if !ok {
		if len(f.Accounts.Shadow) == 0 {
			return 0 // shadow unreadable: reported with the accounts
		}
		j.add(runner.Fail, codeUserLock, kp, who+" has no /etc/shadow entry", "", "missing",
			j.liveOr(codeUserLock, "when the user has no shadow entry", "when a user of an image has no shadow entry", "user", u.Name))
		return 1
	}
	lock := true
	if v, ok := c["lock_passwd"]; ok {
		lock = cc.TranslateBool(v)
	}
	lkp := cc.Join(kp, "lock_passwd")
	if lock && !sh.Locked() {
		j.add(runner.Fail, codeUserLock, lkp, who+"'s password is not locked although lock_passwd is true (the default): password login is possible",
			"locked", sh.Describe(),
			codeUserLock.FixOn(f.Live, "user", u.Name))
		return 1
	}
	hash := ""
	for _, k := range []string{"hashed_passwd", "passwd"} {
		if s, ok := c[k].(string); ok && s != "" {
			hash = s
			lkp = cc.Join(kp, k)
		}
	}
	_, plain := c["plain_text_passwd"].(string)
	if lock || (hash == "" && !plain) {
		return 0
	}
	switch {
	case !sh.HasPassword():
		j.add(runner.Fail, codeUserPassword, lkp, who+" was given a password, but /etc/shadow has none usable", "a password (not shown)", sh.Describe(),
			codeUserPassword.FixOn(f.Live))
		return 1
	case hash != "" && sh.Hash != hash:
		j.add(runner.Fail, codeUserPassword, lkp, who+"'s password hash in /etc/shadow is not the one user-data set (neither is shown)", "the requested hash", "another hash",
			j.liveOr(codeUserPassword, "when the hash was changed", "when the hash in an image was changed", "user", u.Name))
		return 1
	}
	return 0
}

// sudoRules is write_sudo_rules' reading of sudo.
func sudoRules(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, cc.PyStr(e))
		}
		return out
	}
	return nil
}

func (j *judge) sudo(u cc.User, kp, who string) int {
	f := j.f
	v, ok := u.Config["sudo"]
	if !ok || !cc.Truthy(v) {
		return 0
	}
	kp = cc.Join(kp, "sudo")
	bad := 0
	drop := f.Display(SudoersDropIn)
	for _, r := range sudoRules(v) {
		_, found := f.Sudoers.FindRule(SudoersDropIn, u.Name, r)
		switch {
		case !found && f.Files[SudoersDropIn].Exists && !f.Sudoers.Reads(SudoersDropIn):
			// The file exists but sudo does not read it: look in it directly.
			bad++
			j.add(runner.Fail, codeSudoNotIncluded, kp, fmt.Sprintf("%s's sudo rule is in %s, but /etc/sudoers does not include that directory, so sudo ignores it", who, drop),
				u.Name+" "+r, "/etc/sudoers reads "+strings.Join(f.Sudoers.Files, ", "),
				codeSudoNotIncluded.FixOn(f.Live))
		case !found:
			bad++
			j.add(runner.Fail, codeSudoMissing, kp, fmt.Sprintf("%s's sudo rule %q is not in %s", who, sudoers.Normalize(u.Name+" "+r), drop),
				u.Name+" "+r, orStr(strings.Join(f.Sudoers.Problems, "; "), "no such line"),
				codeSudoMissing.FixOn(f.Live, "rule", sudoers.Normalize(u.Name+" "+r), "file", SudoersDropIn))
		}
	}
	return bad
}

// keys judges the requested keys of one user: present by key in one of
// sshd's AuthorizedKeysFile paths, with modes StrictModes accepts.
func (j *judge) keys(name string, pw passwd.User, kp string, keys []reqKey, who string) (int, int) {
	f := j.f
	if len(keys) == 0 {
		return 0, 0
	}
	paths := authorizedKeysPaths(f.SSHD, pw.Home, name)
	var have []authkeys.Key
	var where string
	for _, p := range paths {
		fl := f.Files[p]
		if fl.Exists && fl.Content != nil {
			ks, _ := authkeys.Parse(fl.Content)
			have = append(have, ks...)
			if where == "" {
				where = p
			}
		}
	}
	if where == "" {
		where = paths[0]
	}
	found, bad := 0, 0
	for i, rk := range keys {
		ikp := rk.path
		want, err := parseKey(rk.key)
		if err != nil {
			bad++
			j.add(runner.Fail, codeKeyMissing, ikp, fmt.Sprintf("%s: requested key %d is not a public key sshd can use (%v)", who, i, err), "a public key", "",
				codeKeyMissing.CaseFix("when the requested key does not parse"))
			continue
		}
		ok := false
		for _, h := range have {
			if h.Same(want) {
				ok = true
			}
		}
		if !ok {
			bad++
			j.add(runner.Fail, codeKeyMissing, ikp, fmt.Sprintf("%s's key %s is not in %s", who, want.Describe(), f.Display(where)),
				want.Describe(), fmt.Sprintf("%d other keys", len(have)),
				codeKeyMissing.FixOn(f.Live, "file", where), "authorized_keys_files", strings.Join(paths, " "))
			continue
		}
		found++
	}
	if found > 0 {
		bad += j.strictModes(name, pw, kp, where, who)
	}
	return found, bad
}

// strictModes applies sshd's secure_filename rules (StrictModes yes, the
// default): the key file and each directory up to the home directory must
// be owned by root or the user and not writable by group or others.
func (j *judge) strictModes(name string, pw passwd.User, kp, file, who string) int {
	f := j.f
	if d, ok := f.SSHD.First("StrictModes"); ok && strings.EqualFold(d.Value(), "no") {
		return 0
	}
	for _, p := range secureChain(file, pw.Home) {
		fl := f.Files[p]
		if !fl.Exists {
			continue
		}
		mode := fl.Info.Mode
		var why string
		switch {
		case fl.Info.UID != 0 && fl.Info.UID != pw.UID:
			why = fmt.Sprintf("is owned by uid %d, neither root nor %s", fl.Info.UID, name)
		case mode.Perm()&0o022 != 0:
			why = fmt.Sprintf("has mode %04o, writable by group or others", mode.Perm())
		case p == file && !mode.IsRegular():
			why = "is not a regular file"
		}
		if why == "" {
			continue
		}
		fix := codeKeyStrictModes.FixOn(f.Live, "path", p, "user", name)
		j.add(runner.Fail, codeKeyStrictModes, cc.Join(kp, "ssh_authorized_keys"),
			fmt.Sprintf("sshd refuses %s's keys: %s %s (StrictModes)", who, f.Display(p), why),
			"owner root or "+name+", no group/other write", fmt.Sprintf("uid %d mode %04o", fl.Info.UID, mode.Perm()), fix,
			"path", f.Display(p))
		return 1
	}
	return 0
}

// rootKeys judges disable_root: cloud-init writes the top-level keys into
// root's authorized_keys behind a refusal command naming the default user.
func (j *judge) rootKeys(defName string) {
	f := j.f
	root, ok := f.Accounts.User("root")
	if !ok {
		return
	}
	disable := cc.GetBool(f.Effective, "disable_root", true)
	opts := cc.GetString(f.Effective, "disable_root_opts", disableUserOpts)
	user := defName
	if user == "" {
		user = "NONE"
	}
	prefix := ""
	if disable {
		prefix = strings.NewReplacer("$USER", user, "$DISABLE_USER", "root").Replace(opts)
	}
	paths := authorizedKeysPaths(f.SSHD, root.Home, "root")
	var have []authkeys.Key
	for _, p := range paths {
		if fl := f.Files[p]; fl.Content != nil {
			ks, _ := authkeys.Parse(fl.Content)
			have = append(have, ks...)
		}
	}
	for i, s := range cc.GetList(f.UserData.Value, "ssh_authorized_keys", nil) {
		kp := cc.Index("ssh_authorized_keys", i)
		want, err := parseKey(s)
		if err != nil {
			continue // reported for the default user
		}
		var got *authkeys.Key
		for k := range have {
			if have[k].Same(want) {
				got = &have[k]
			}
		}
		switch {
		case got == nil:
			j.add(runner.Fail, codeRootKeyPrefix, kp, fmt.Sprintf("root's authorized_keys lacks %s, which cloud-init puts there (with disable_root %v)", want.Describe(), disable),
				"the key, prefixed with "+orStr(prefix, "nothing"), "absent", codeRootKeyPrefix.Fixf())
		case disable && got.Options != prefix:
			j.add(runner.Fail, codeRootKeyPrefix, cc.Join(kp, "disable_root"),
				fmt.Sprintf("disable_root is true, but root's copy of %s does not carry cloud-init's refusal command, so it logs in as root", want.Describe()),
				"options: "+prefix, "options: "+orStr(got.Options, "none"),
				codeRootKeyPrefix.CaseFix("when the refusal command is missing"))
		case !disable && got.Options != "":
			j.add(runner.Fail, codeRootKeyPrefix, kp, fmt.Sprintf("disable_root is false, but root's copy of %s still carries options", want.Describe()),
				"no options", "options: "+got.Options, codeRootKeyPrefix.CaseFix("when options are left over"))
		default:
			j.add(runner.Pass, codeRootKeyPrefix, kp, fmt.Sprintf("root's authorized_keys has %s as disable_root %v asks", want.Describe(), disable), "", "", "")
		}
	}
}

// disableUserOpts is ssh_util.DISABLE_USER_OPTS.
const disableUserOpts = `no-port-forwarding,no-agent-forwarding,no-X11-forwarding,command="echo 'Please login as the user \"$USER\" rather than the user \"$DISABLE_USER\".';echo;sleep 10;exit 142"`
