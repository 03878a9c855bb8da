/**
 * Every keyword OpenSSH 9.2p1 (Debian 12's build: with GSSAPI, its key-exchange patch and PKCS#11) accepts in
 * ssh_config, lower-cased, from readconf.c's keyword table. A keyword not listed here makes ssh refuse the
 * config ("Bad configuration option") unless IgnoreUnknown names it. The resolver interprets only the options
 * the transport uses; the others are known, so accepted, but their values are not checked.
 */
export const OPENSSH_KEYWORDS: ReadonlySet<string> = new Set([
  'addkeystoagent', 'addressfamily', 'afstokenpassing', 'batchmode', 'bindaddress', 'bindinterface',
  'canonicaldomains', 'canonicalizefallbacklocal', 'canonicalizehostname', 'canonicalizemaxdots',
  'canonicalizepermittedcnames', 'casignaturealgorithms', 'certificatefile', 'challengeresponseauthentication',
  'checkhostip', 'cipher', 'ciphers', 'clearallforwardings', 'compression', 'compressionlevel', 'connectionattempts',
  'connecttimeout', 'controlmaster', 'controlpath', 'controlpersist', 'dsaauthentication', 'dynamicforward',
  'enableescapecommandline', 'enablesshkeysign', 'escapechar', 'exitonforwardfailure', 'fallbacktorsh',
  'fingerprinthash', 'forkafterauthentication', 'forwardagent', 'forwardx11', 'forwardx11timeout',
  'forwardx11trusted', 'gatewayports', 'globalknownhostsfile', 'globalknownhostsfile2', 'gssapiauthentication',
  'gssapiclientidentity', 'gssapidelegatecredentials', 'gssapikexalgorithms', 'gssapikeyexchange',
  'gssapirenewalforcesrekey', 'gssapiserveridentity', 'gssapitrustdns', 'hashknownhosts', 'host',
  'hostbasedacceptedalgorithms', 'hostbasedauthentication', 'hostbasedkeytypes', 'hostkeyalgorithms', 'hostkeyalias',
  'hostname', 'identitiesonly', 'identityagent', 'identityfile', 'identityfile2', 'ignoreunknown', 'include',
  'ipqos', 'kbdinteractiveauthentication', 'kbdinteractivedevices', 'keepalive', 'kerberosauthentication',
  'kerberostgtpassing', 'kexalgorithms', 'knownhostscommand', 'localcommand', 'localforward', 'loglevel',
  'logverbose', 'macs', 'match', 'nohostauthenticationforlocalhost', 'numberofpasswordprompts',
  'passwordauthentication', 'permitlocalcommand', 'permitremoteopen', 'pkcs11provider', 'port',
  'preferredauthentications', 'protocol', 'proxycommand', 'proxyjump', 'proxyusefdpass', 'pubkeyacceptedalgorithms',
  'pubkeyacceptedkeytypes', 'pubkeyauthentication', 'rekeylimit', 'remotecommand', 'remoteforward', 'requesttty',
  'requiredrsasize', 'revokedhostkeys', 'rhostsauthentication', 'rhostsrsaauthentication', 'rsaauthentication',
  'securitykeyprovider', 'sendenv', 'serveralivecountmax', 'serveraliveinterval', 'sessiontype', 'setenv',
  'skeyauthentication', 'smartcarddevice', 'stdinnull', 'streamlocalbindmask', 'streamlocalbindunlink',
  'stricthostkeychecking', 'syslogfacility', 'tcpkeepalive', 'tisauthentication', 'tunnel', 'tunneldevice',
  'updatehostkeys', 'useprivilegedport', 'user', 'userknownhostsfile', 'userknownhostsfile2', 'useroaming', 'usersh',
  'verifyhostkeydns', 'visualhostkey', 'xauthlocation',
]);
