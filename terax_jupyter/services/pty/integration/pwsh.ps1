# Terax shell integration for PowerShell: OSC 7 (cwd) and OSC 133 (prompt, command, exit code).
# Dot-sourced after the user's profile; wraps their prompt and the Enter key of PSReadLine.
if (-not $Global:__TeraxInstalled -and $env:TERAX_NONCE) {
    $Global:__TeraxInstalled = $true
    $Global:__TeraxNonce = $env:TERAX_NONCE
    Remove-Item Env:TERAX_NONCE -ErrorAction SilentlyContinue
    $Global:__TeraxRunning = $false
    $Global:__TeraxUserPrompt = $function:prompt

    function Global:prompt {
        $succeeded = $?
        $lastCode = $LASTEXITCODE
        $esc = [char]27
        $bel = [char]7
        $out = ""
        if ($Global:__TeraxRunning) {
            $code = if ($succeeded) { 0 } elseif ($lastCode) { $lastCode } else { 1 }
            $out += "$esc]133;D;$code;nonce=$($Global:__TeraxNonce)$bel"
            $Global:__TeraxRunning = $false
        }
        $location = $executionContext.SessionState.Path.CurrentLocation
        if ($location.Provider.Name -eq "FileSystem") {
            $path = $location.ProviderPath -replace '\\', '/'
            if (-not $path.StartsWith("/")) { $path = "/" + $path }
            $out += "$esc]7;file://$([System.Net.Dns]::GetHostName())$([uri]::EscapeUriString($path))$bel"
        }
        $out += "$esc]133;A;nonce=$($Global:__TeraxNonce)$bel"
        $out += & $Global:__TeraxUserPrompt
        $out += "$esc]133;B;nonce=$($Global:__TeraxNonce)$bel"
        $global:LASTEXITCODE = $lastCode
        return $out
    }

    if (Get-Module -Name PSReadLine) {
        Set-PSReadLineKeyHandler -Chord Enter -ScriptBlock {
            $line = $null
            $cursor = $null
            [Microsoft.PowerShell.PSConsoleReadLine]::GetBufferState([ref]$line, [ref]$cursor)
            if ($line.Trim()) {
                $Global:__TeraxRunning = $true
                $encoded = [uri]::EscapeDataString($line)
                [Console]::Write("$([char]27)]133;C;nonce=$($Global:__TeraxNonce);cmdline_url=$encoded$([char]7)")
            }
            [Microsoft.PowerShell.PSConsoleReadLine]::AcceptLine()
        }
    }
}
