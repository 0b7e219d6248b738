import Foundation

/// One variant's results.
struct VariantResult {
    let name: String
    let samples: [Sample]
    let peakResidentBytes: Int

    var rowsRead: Int { samples.reduce(0) { $0 + $1.rowsRead } }
    var statements: Int { samples.reduce(0) { $0 + $1.statements } }
    var seconds: Double { samples.reduce(0) { $0 + $1.seconds } }
}

/// The samples as CSV: one line per perform.
func samplesCSV(_ samples: [Sample]) -> String {
    "perform,resident_bytes,rows_read,statements,seconds\n"
        + samples.map { "\($0.perform),\($0.residentBytes),\($0.rowsRead),\($0.statements),\(String(format: "%.6f", $0.seconds))" }
        .joined(separator: "\n") + "\n"
}

/// Samples from CSV made by ``samplesCSV(_:)``.
func parseSamples(_ text: String) -> [Sample] {
    text.split(separator: "\n").dropFirst().compactMap { line in
        let fields = line.split(separator: ",").map(String.init)
        guard fields.count == 5, let perform = Int(fields[0]), let resident = Int(fields[1]), let rows = Int(fields[2]),
            let statements = Int(fields[3]), let seconds = Double(fields[4])
        else { return nil }
        return Sample(perform: perform, residentBytes: resident, rowsRead: rows, statements: statements, seconds: seconds)
    }
}

/// Both variants as one CSV: a line per variant and perform.
func combinedCSV(_ results: [VariantResult]) -> String {
    "variant,perform,resident_bytes,rows_read,statements,seconds\n"
        + results.flatMap { result in
            result.samples.map {
                "\(result.name),\($0.perform),\($0.residentBytes),\($0.rowsRead),\($0.statements),\(String(format: "%.6f", $0.seconds))"
            }
        }.joined(separator: "\n") + "\n"
}

/// The summary table.
func table(_ results: [VariantResult]) -> String {
    func mebibytes(_ bytes: Int) -> String { String(format: "%.1f MiB", Double(bytes) / 1_048_576) }
    var lines = ["variant                      peak resident   rows read   statements   wall time"]
    for result in results {
        lines.append(
            result.name.padding(toLength: 28, withPad: " ", startingAt: 0)
                + mebibytes(result.peakResidentBytes).leftPadded(15)
                + String(result.rowsRead).leftPadded(12)
                + String(result.statements).leftPadded(13)
                + String(format: "%10.2fs", result.seconds))
    }
    return lines.joined(separator: "\n")
}

extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}

/// A round step for about `count` ticks up to `maximum`: 1, 2 or 5 times a power of ten.
func tickStep(_ maximum: Double, count: Double = 5) -> Double {
    let raw = max(maximum, 1e-9) / count
    let power = pow(10, floor(log10(raw)))
    for multiple in [1.0, 2.0, 5.0, 10.0] where raw <= multiple * power { return multiple * power }
    return 10 * power
}

/// A whole number with thin groups of thousands ("12 000"), for axis labels.
func grouped(_ value: Double) -> String {
    let digits = String(Int(value.rounded()))
    var out = ""
    for (index, character) in digits.reversed().enumerated() {
        if index > 0 && index % 3 == 0 && character != "-" { out.append(" ") }
        out.append(character)
    }
    return String(out.reversed())
}

/// An SVG chart: resident memory in MiB (top) and rows read per perform (bottom) over the
/// performs, both variants on each; each panel has a titled y axis with round ticks, and the
/// shared x axis is numbered by perform.
func chartSVG(_ results: [VariantResult], title: String) -> String {
    let width = 900.0, panelHeight = 240.0, left = 90.0, right = 24.0, top = 70.0, gap = 80.0
    let colors = ["#1f77b4", "#d62728"]
    let performs = Double(max(1, results.map(\.samples.count).max() ?? 1))
    func x(_ perform: Double) -> Double { left + (width - left - right) * (perform - 1) / max(1, performs - 1) }
    let bottom = top + 2 * panelHeight + gap
    var svg = """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(bottom + 90))" font-family="sans-serif" font-size="13">
        <rect width="100%" height="100%" fill="white"/>
        <text x="\(left)" y="28" font-size="16" font-weight="bold">\(title)</text>

        """
    func panel(_ index: Int, _ label: String, _ value: (Sample) -> Double, _ format: (Double) -> String) {
        let y0 = top + Double(index) * (panelHeight + gap)
        let largest = max(1, results.flatMap(\.samples).map(value).max() ?? 1)
        let step = tickStep(largest)
        let maximum = (largest / step).rounded(.up) * step
        func y(_ v: Double) -> Double { y0 + panelHeight - panelHeight * v / maximum }
        svg += "<text x=\"\(left)\" y=\"\(y0 - 12)\" font-weight=\"bold\">\(label)</text>\n"
        var tick = 0.0
        while tick <= maximum + step / 2 {
            svg += "<line x1=\"\(left)\" y1=\"\(y(tick))\" x2=\"\(width - right)\" y2=\"\(y(tick))\" stroke=\"#e4e4e4\"/>\n"
            svg += "<text x=\"\(left - 8)\" y=\"\(y(tick) + 4)\" text-anchor=\"end\">\(format(tick))</text>\n"
            tick += step
        }
        svg += "<line x1=\"\(left)\" y1=\"\(y0 + panelHeight)\" x2=\"\(width - right)\" y2=\"\(y0 + panelHeight)\" stroke=\"#666\"/>\n"
        svg += "<line x1=\"\(left)\" y1=\"\(y0)\" x2=\"\(left)\" y2=\"\(y0 + panelHeight)\" stroke=\"#666\"/>\n"
        // The x ticks, numbered on each panel so that neither needs the other to be read.
        let xStep = max(1, tickStep(performs, count: 8))
        var perform = xStep
        var xTicks = [1.0]
        while perform <= performs {
            xTicks.append(perform)
            perform += xStep
        }
        for tick in xTicks {
            svg += "<line x1=\"\(x(tick))\" y1=\"\(y0 + panelHeight)\" x2=\"\(x(tick))\" y2=\"\(y0 + panelHeight + 5)\" stroke=\"#666\"/>\n"
            svg += "<text x=\"\(x(tick))\" y=\"\(y0 + panelHeight + 19)\" text-anchor=\"middle\">\(grouped(tick))</text>\n"
        }
        for (position, result) in results.enumerated() {
            let points = result.samples.map { "\(x(Double($0.perform + 1))),\(y(value($0)))" }.joined(separator: " ")
            svg += "<polyline fill=\"none\" stroke=\"\(colors[position % colors.count])\" stroke-width=\"1.8\" points=\"\(points)\"/>\n"
        }
    }
    panel(0, "Resident memory of the process (MiB)", { Double($0.residentBytes) / 1_048_576 }, { "\(grouped($0)) MiB" })
    panel(1, "Rows read from the store in each perform", { Double($0.rowsRead) }, { grouped($0) })
    svg +=
        "<text x=\"\((width + left) / 2)\" y=\"\(bottom + 40)\" text-anchor=\"middle\">perform number (1 to \(grouped(performs)))</text>\n"
    for (position, result) in results.enumerated() {
        let legendX = left + Double(position) * 330
        svg += "<rect x=\"\(legendX)\" y=\"\(bottom + 60)\" width=\"18\" height=\"4\" fill=\"\(colors[position % colors.count])\"/>"
        svg += "<text x=\"\(legendX + 24)\" y=\"\(bottom + 66)\">\(result.name)</text>\n"
    }
    return svg + "</svg>\n"
}
