# Installs the triforge binary for Windows from GitHub releases.
#
#   irm https://raw.githubusercontent.com/ilyasmukiev/triforge/main/install.ps1 | iex
#
# Environment:
#   TRIFORGE_VERSION          a release such as 0.2.0 (default: the latest release)
#   TRIFORGE_INSTALL_DIR      where triforge.exe goes (default: ~\.local\bin)
#   TRIFORGE_DOWNLOAD_URL     a base URL holding the release assets and SHA256SUMS (a mirror, or a local test server)
#   TRIFORGE_NO_MODIFY_PATH   set to 1 to leave the user PATH alone
#
# The asset's sha256 is checked against the release's SHA256SUMS before anything is installed.

$ErrorActionPreference = 'Stop'
$ProgressPreference = 'SilentlyContinue' # the progress bar makes Invoke-WebRequest many times slower

function Install-Triforge {
  $repo = 'ilyasmukiev/triforge'

  $onWindows = ($PSVersionTable.PSEdition -eq 'Desktop') -or $IsWindows
  if (-not $onWindows) {
    throw "install.ps1 is for Windows; on Linux and macOS run: curl -fsSL https://raw.githubusercontent.com/$repo/main/install.sh | sh"
  }
  # x64 builds also run on Windows on Arm through its x64 emulation.
  $arch = [System.Runtime.InteropServices.RuntimeInformation]::OSArchitecture.ToString()
  if ($arch -ne 'X64' -and $arch -ne 'Arm64') {
    throw "no triforge build for the $arch processor; builds exist for x64 (and run on Arm64)"
  }
  $asset = 'triforge-windows-x64.exe'

  $version = if ($env:TRIFORGE_VERSION) { $env:TRIFORGE_VERSION.TrimStart('v') } else { 'latest' }
  if ($env:TRIFORGE_DOWNLOAD_URL) {
    $base = $env:TRIFORGE_DOWNLOAD_URL.TrimEnd('/')
  } elseif ($version -eq 'latest') {
    $base = "https://github.com/$repo/releases/latest/download"
  } else {
    $base = "https://github.com/$repo/releases/download/v$version"
  }
  $installDir = if ($env:TRIFORGE_INSTALL_DIR) { $env:TRIFORGE_INSTALL_DIR } else { Join-Path $HOME '.local\bin' }

  $tmp = Join-Path ([System.IO.Path]::GetTempPath()) ("triforge-" + [System.Guid]::NewGuid().ToString('N'))
  New-Item -ItemType Directory -Path $tmp | Out-Null
  try {
    Write-Host "Downloading $asset ($version) from $base"
    foreach ($name in @('SHA256SUMS', $asset)) {
      try {
        Invoke-WebRequest -UseBasicParsing -Uri "$base/$name" -OutFile (Join-Path $tmp $name)
      } catch {
        throw "cannot download $base/$name ($($_.Exception.Message))"
      }
    }

    $expected = $null
    foreach ($line in Get-Content (Join-Path $tmp 'SHA256SUMS')) {
      $fields = $line.Trim() -split '\s+'
      if ($fields.Count -ge 2 -and ($fields[1] -eq $asset -or $fields[1] -eq "*$asset")) { $expected = $fields[0].ToLower(); break }
    }
    if (-not $expected) { throw "SHA256SUMS has no entry for $asset" }
    $actual = (Get-FileHash -Algorithm SHA256 -Path (Join-Path $tmp $asset)).Hash.ToLower()
    if ($actual -ne $expected) {
      throw "checksum mismatch for $asset (expected $expected, got $actual): refusing to install"
    }

    New-Item -ItemType Directory -Force -Path $installDir | Out-Null
    $target = Join-Path $installDir 'triforge.exe'
    # A running triforge.exe cannot be overwritten on Windows, but it can be renamed out of the way.
    if (Test-Path $target) {
      $old = "$target.old"
      Remove-Item -Force -ErrorAction SilentlyContinue $old
      Move-Item -Force $target $old
    }
    Move-Item -Force (Join-Path $tmp $asset) $target
    Remove-Item -Force -ErrorAction SilentlyContinue "$target.old"
  } finally {
    Remove-Item -Recurse -Force -ErrorAction SilentlyContinue $tmp
  }

  $installed = $null
  try { $installed = (& $target --version) 2>$null } catch { $installed = $null }
  if ($installed) { Write-Host "Installed $installed to $target" }
  else { Write-Host "Installed $target (warning: it did not run here: '$target --version' failed)" }

  $command = 'triforge'
  $userPath = [Environment]::GetEnvironmentVariable('Path', 'User')
  $onPath = ($env:Path -split ';') -contains $installDir
  if (-not $onPath) {
    if ($env:TRIFORGE_NO_MODIFY_PATH -eq '1') {
      $command = "& '$($target -replace "'", "''")'"
      Write-Host ""
      Write-Host "$installDir is not on your PATH. Add it with:"
      Write-Host "  [Environment]::SetEnvironmentVariable('Path', `"$installDir;`" + [Environment]::GetEnvironmentVariable('Path', 'User'), 'User')"
    } else {
      $newPath = if ($userPath) { "$installDir;$userPath" } else { $installDir }
      [Environment]::SetEnvironmentVariable('Path', $newPath, 'User')
      $env:Path = "$installDir;$env:Path"
      Write-Host "Added $installDir to your user PATH (new terminals will see it)."
    }
  }
  Write-Host ""
  Write-Host "Next: run ``$command install`` to connect triforge to your coding agents."
}

try {
  Install-Triforge
} catch {
  [Console]::Error.WriteLine("triforge install: $($_.Exception.Message)")
  # `irm | iex` runs in the caller's session: exit would close the user's terminal, so only scripts exit.
  if ($MyInvocation.MyCommand.Path) { exit 1 }
}
