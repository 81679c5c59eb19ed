// Cryptocurrency miners.
rule Miner_XMRig_Stratum
{
    meta:
        name = "Cryptocurrency miner"
        description = "Stratum mining-pool protocol with miner configuration or XMRig strings"
        severity = "medium"
        category = "miner"
        confidence = "0.8"
    strings:
        $stratum = /stratum\+(tcp|ssl|tls):\/\/[a-z0-9.\-]{4,}/ nocase ascii wide
        $x1 = "xmrig" nocase ascii wide
        $x2 = "randomx" nocase ascii wide
        $x3 = "cryptonight" nocase ascii wide
        $x4 = "\"donate-level\"" ascii
        $x5 = "--donate-level" ascii
        $pool = /(pool\.minexmr|supportxmr|nanopool|moneroocean|2miners|hashvault)\.(com|org|pro|stream|net)/ nocase ascii wide
    condition:
        ($stratum and (any of ($x*) or $pool)) or (2 of ($x*) and $pool)
}
