package intent

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

const reprovision = "; cloud-init applies users only on an instance's first boot, so fix the image or user-data and re-provision (or apply it by hand)"

// rebuild ends an account fix under an image root, where usermod and
// friends would change the host's own accounts.
const rebuild = "; cloud-init applies users only on an instance's first boot, so fix the image's build or its user-data and rebuild"

// accountsReadFix is the fix for account databases that could not be
// read, by the first that failed: a root-only file (/etc/shadow) asks for
// root only when guestcheck is not root already.
func (j *judge) accountsReadFix() string {
	f := j.f
	if f.AccountsReadErr == nil {
		return "Repair the lines the message names"
	}
	return runner.ReadFix(f.IsRoot, f.AccountsReadFile, f.AccountsReadErr)
}

// accountFix is an account remediation: the command on the running
// system, the edit of the image's own files under an image root.
func (j *judge) accountFix(running, image string) string {
	return runner.Fix(j.f.Live, running+reprovision, image+rebuild)
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
		j.add(runner.Fail, CodeUsersInvalid, "users", "cloud-init cannot use part of users/groups: "+p, "", "",
			"Write users as a list of mappings (name, groups, shell, sudo, ssh_authorized_keys) as cloud-init's documentation shows")
	}
	if !hasUsers && !hasUser && !hasTop && len(f.Users) == 0 {
		return
	}
	if len(f.AccountsErr) > 0 && len(f.Accounts.Users) == 0 {
		j.add(runner.Error, CodeUnreadable, "users", "the account databases could not be read: "+strings.Join(f.AccountsErr, "; "), "", "",
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
			j.add(runner.Fail, CodeGroupMissing, g.Path, fmt.Sprintf("group %s does not exist", g.Name), "group "+g.Name, "no such group in /etc/group",
				j.accountFix("Create the group (groupadd "+g.Name+")", "Add the group "+g.Name+" to /etc/group in the image"))
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
			j.add(runner.Fail, CodeGroupMissing, g.Path, fmt.Sprintf("group %s lacks the members %s", g.Name, strings.Join(missing, ", ")),
				"members "+strings.Join(g.Members, ","), "members "+strings.Join(grp.Members, ","), j.accountFix("Add them with `gpasswd -a USER "+g.Name+"`", "Add them to "+g.Name+"'s line in /etc/group in the image"))
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
		j.add(runner.Fail, CodeUserMissing, kp, who+" does not exist in /etc/passwd", "user "+u.Name, "no such user",
			j.accountFix("Read /var/log/cloud-init.log for the useradd error (a clash with an existing group or UID is common)",
				"Read /var/log/cloud-init.log in the image for the useradd error (a clash with an existing group or UID is common)"))
		return
	}
	bad := 0
	if v, ok := c["shell"].(string); ok && v != "" && pw.Shell != v {
		bad++
		j.add(runner.Fail, CodeUserShell, cc.Join(kp, "shell"), fmt.Sprintf("%s has shell %s, not the requested %s", who, pw.Shell, v), v, pw.Shell,
			j.accountFix("cloud-init does not change an existing user: run `usermod -s "+v+" "+u.Name+"`",
				"cloud-init does not change an existing user: set "+u.Name+"'s shell to "+v+" in /etc/passwd in the image"))
	}
	if v, ok := c["homedir"].(string); ok && v != "" && path.Clean(pw.Home) != path.Clean(v) {
		bad++
		j.add(runner.Fail, CodeUserHome, cc.Join(kp, "homedir"), fmt.Sprintf("%s has home %s, not the requested %s", who, pw.Home, v), v, pw.Home,
			j.accountFix("Run `usermod -d "+v+" -m "+u.Name+"`", "Set "+u.Name+"'s home to "+v+" in /etc/passwd in the image and move the directory there"))
	}
	noHome := cc.TranslateBool(c["no_create_home"]) || cc.TranslateBool(c["system"])
	if !noHome {
		if h := f.Files[pw.Home]; !h.Exists || !h.Info.Mode.IsDir() {
			bad++
			j.add(runner.Fail, CodeUserHome, kp, fmt.Sprintf("%s's home directory %s does not exist", who, pw.Home), pw.Home, "missing",
				j.accountFix("Create it with `mkhomedir_helper "+u.Name+"`", "Create "+pw.Home+" in the image, owned by "+u.Name))
		}
	}
	groups := f.Accounts.GroupsOf(pw)
	if v, ok := c["primary_group"].(string); ok && v != "" {
		g, _ := f.Accounts.GroupByID(pw.GID)
		if g.Name != v {
			bad++
			j.add(runner.Fail, CodeUserPrimaryGroup, cc.Join(kp, "primary_group"), fmt.Sprintf("%s's primary group is %s, not the requested %s", who, orStr(g.Name, fmt.Sprint(pw.GID)), v), v, orStr(g.Name, fmt.Sprint(pw.GID)),
				j.accountFix("Run `usermod -g "+v+" "+u.Name+"`", "Set "+u.Name+"'s group in /etc/passwd in the image to the GID of "+v))
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
		j.add(runner.Fail, CodeUserGroups, cc.Join(kp, "groups"), fmt.Sprintf("%s is not in the requested groups %s", who, strings.Join(missing, ", ")),
			strings.Join(want, ","), strings.Join(groups, ","), j.accountFix("Run `usermod -aG "+strings.Join(missing, ",")+" "+u.Name+"`",
				"Add "+u.Name+" to "+strings.Join(missing, ", ")+" in /etc/group in the image"))
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
		j.add(runner.Pass, CodeUserOK, kp, who+" exists as requested: "+strings.Join(parts, ", "), "", "", "",
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
		j.add(runner.Fail, CodeUserLock, kp, who+" has no /etc/shadow entry", "", "missing", "Run `pwconv` to rebuild /etc/shadow")
		return 1
	}
	lock := true
	if v, ok := c["lock_passwd"]; ok {
		lock = cc.TranslateBool(v)
	}
	lkp := cc.Join(kp, "lock_passwd")
	if lock && !sh.Locked() {
		j.add(runner.Fail, CodeUserLock, lkp, who+"'s password is not locked although lock_passwd is true (the default): password login is possible",
			"locked", sh.Describe(),
			runner.Fix(j.f.Live, "Run `passwd -l "+u.Name+"`", "Lock it in /etc/shadow in the image (a ! before the hash)")+"; cloud-init locks it only when it creates or updates the user")
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
		j.add(runner.Fail, CodeUserPassword, lkp, who+" was given a password, but /etc/shadow has none usable", "a password (not shown)", sh.Describe(),
			j.accountFix("Read /var/log/cloud-init.log for the chpasswd error", "Read /var/log/cloud-init.log in the image for the chpasswd error"))
		return 1
	case hash != "" && sh.Hash != hash:
		j.add(runner.Fail, CodeUserPassword, lkp, who+"'s password hash in /etc/shadow is not the one user-data set (neither is shown)", "the requested hash", "another hash",
			"Something changed the password after cloud-init set it; set it again with `usermod -p`")
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
			j.add(runner.Fail, CodeSudoNotIncluded, kp, fmt.Sprintf("%s's sudo rule is in %s, but /etc/sudoers does not include that directory, so sudo ignores it", who, drop),
				u.Name+" "+r, "/etc/sudoers reads "+strings.Join(f.Sudoers.Files, ", "),
				runner.Fix(j.f.Live, "Add `@includedir /etc/sudoers.d` to /etc/sudoers with visudo", "Add `@includedir /etc/sudoers.d` to /etc/sudoers in the image"))
		case !found:
			bad++
			j.add(runner.Fail, CodeSudoMissing, kp, fmt.Sprintf("%s's sudo rule %q is not in %s", who, sudoers.Normalize(u.Name+" "+r), drop),
				u.Name+" "+r, orStr(strings.Join(f.Sudoers.Problems, "; "), "no such line"),
				j.accountFix("Add the rule with `visudo -f "+SudoersDropIn+"`", "Add the rule to "+SudoersDropIn+" in the image (`visudo -c -f FILE` checks a copy)"))
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
			j.add(runner.Fail, CodeKeyMissing, ikp, fmt.Sprintf("%s: requested key %d is not a public key sshd can use (%v)", who, i, err), "a public key", "",
				"Give the key as `TYPE BASE64 [COMMENT]`, one key per list item")
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
			j.add(runner.Fail, CodeKeyMissing, ikp, fmt.Sprintf("%s's key %s is not in %s", who, want.Describe(), f.Display(where)),
				want.Describe(), fmt.Sprintf("%d other keys", len(have)),
				"Add the key to "+where+reprovision, "authorized_keys_files", strings.Join(paths, " "))
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
		fix := runner.Fix(f.Live, fmt.Sprintf("Run `chmod go-w %s` and `chown %s %s`", p, name, p),
			fmt.Sprintf("Make %s in the image owned by %s (its UID in the image's /etc/passwd) and not writable by group or others", p, name))
		j.add(runner.Fail, CodeKeyStrictModes, cc.Join(kp, "ssh_authorized_keys"),
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
			j.add(runner.Fail, CodeRootKeyPrefix, kp, fmt.Sprintf("root's authorized_keys lacks %s, which cloud-init puts there (with disable_root %v)", want.Describe(), disable),
				"the key, prefixed with "+orStr(prefix, "nothing"), "absent", "Re-provision, or add the key to /root/.ssh/authorized_keys with the same options")
		case disable && got.Options != prefix:
			j.add(runner.Fail, CodeRootKeyPrefix, cc.Join(kp, "disable_root"),
				fmt.Sprintf("disable_root is true, but root's copy of %s does not carry cloud-init's refusal command, so it logs in as root", want.Describe()),
				"options: "+prefix, "options: "+orStr(got.Options, "none"),
				"Prefix the key in /root/.ssh/authorized_keys with cloud-init's disable_root_opts, or remove it")
		case !disable && got.Options != "":
			j.add(runner.Fail, CodeRootKeyPrefix, kp, fmt.Sprintf("disable_root is false, but root's copy of %s still carries options", want.Describe()),
				"no options", "options: "+got.Options, "Remove the options from the key in /root/.ssh/authorized_keys")
		default:
			j.add(runner.Pass, CodeRootKeyPrefix, kp, fmt.Sprintf("root's authorized_keys has %s as disable_root %v asks", want.Describe(), disable), "", "", "")
		}
	}
}

// disableUserOpts is ssh_util.DISABLE_USER_OPTS.
const disableUserOpts = `no-port-forwarding,no-agent-forwarding,no-X11-forwarding,command="echo 'Please login as the user \"$USER\" rather than the user \"$DISABLE_USER\".';echo;sleep 10;exit 142"`
